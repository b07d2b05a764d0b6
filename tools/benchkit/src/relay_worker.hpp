#pragma once
// One tap-relay queue: a thread that moves frames between queue i of the
// guest-side TAP and queue i of the host-side TAP with plain read/write and
// poll(), vnet header passed through unchanged (both TAPs use the same
// vnet_hdr size and offloads). No ring protocol, no copy beyond read/write:
// the upper bound a userspace relay between two TAPs reaches on this machine.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "unetback/platform/frame_port.hpp"

namespace unetback::benchkit {

/// Directions, named from the guest's side as the daemon's counters are.
enum relay_dir : std::size_t { guest_tx = 0, guest_rx = 1 };

/// Per-direction counters of one queue (written by its thread only; read after join).
struct relay_counters {
  std::array<std::uint64_t, 2> frames{};   ///< frames written to the other TAP
  std::array<std::uint64_t, 2> bytes{};    ///< their bytes, vnet header excluded
  std::array<std::uint64_t, 2> dropped{};  ///< write refused (EAGAIN) or failed
  std::array<std::uint64_t, 2> errors{};   ///< read errors
  std::uint64_t wakeups = 0;               ///< poll() returns
};

/// Frames moved per direction per wakeup before the other direction gets a turn.
inline constexpr std::size_t relay_batch = 64;

class relay_worker {
 public:
  /// `guest` and `host` are this queue's ports; `stop_fd` becomes readable to stop.
  relay_worker(platform::frame_port& guest, platform::frame_port& host, int stop_fd);

  /// The loop: poll both ports and stop_fd, drain each readable port (up to
  /// relay_batch frames) into the other. Returns when stop_fd is readable or a
  /// port reports POLLERR/POLLHUP.
  void run();

  [[nodiscard]] const relay_counters& counters() const { return counters_; }

 private:
  void pump(platform::frame_port& from, platform::frame_port& to, relay_dir dir);

  platform::frame_port& guest_;
  platform::frame_port& host_;
  int stop_fd_;
  relay_counters counters_;
  std::vector<std::byte> buf_;  ///< one frame: vnet header + up to 64 KiB (preallocated)
};

}  // namespace unetback::benchkit
