#pragma once
// A queue's frame port with the direct path in it (docs/direct-path.md, "The
// wiring"): it wraps the queue's TAP port, so the worker does not know which
// frames bypass the host. A frame the worker writes goes to a paired vif's
// queue when route_tx_frame says it may, to the TAP otherwise; a read takes
// frames from the paired vifs' rings and from the TAP, the rings first but
// never more than a burst of them before the TAP gets a look.
//
// The control plane publishes the lane table; the worker reads it once per
// call, without a lock. publish() hands back the table it replaced only once
// no call that could have seen it is still running, so the control plane can
// then free that table, and the rings and doorbells only it named.

#include <atomic>
#include <cstdint>
#include <memory>

#include "unetback/direct/direct_counters.hpp"
#include "unetback/direct/doorbell.hpp"
#include "unetback/direct/lane_table.hpp"
#include "unetback/platform/frame_port.hpp"

namespace unetback::direct {

class direct_port final : public platform::frame_port {
 public:
  /// Wraps `tap`. Throws std::system_error if the doorbell or the epoll set
  /// cannot be made.
  explicit direct_port(std::unique_ptr<platform::frame_port> tap);
  ~direct_port() override;
  direct_port(const direct_port&) = delete;
  direct_port& operator=(const direct_port&) = delete;

  /// An epoll set of the TAP's fd and the doorbell: readable when either is.
  [[nodiscard]] int fd() const override { return epoll_fd_; }
  [[nodiscard]] std::size_t vnet_hdr_size() const override { return tap_->vnet_hdr_size(); }
  long read_frame(std::span<std::byte> buf) override;
  long write_frame(std::span<const iovec> iov) override;
  long set_carrier(bool on) override { return tap_->set_carrier(on); }

  /// What a paired vif's worker rings after a push that found this queue's
  /// ring armed (outbound_lane::bell).
  [[nodiscard]] doorbell& bell() { return bell_; }
  /// Control plane: makes `table` (nullptr: no direct path) the one the
  /// worker uses and returns the one it replaces, once no call can still be
  /// using that. Waits at most for the worker's current call to end.
  const lane_table* publish(const lane_table* table);

  /// Control plane: the bridge has not heard this guest's MAC for a while;
  /// the worker writes one learning frame (fdb_refresh.hpp) through the TAP
  /// before its next direct frame. A guest sending nothing direct needs none.
  void request_learning_frame() { learning_due_.store(true, std::memory_order_relaxed); }

  [[nodiscard]] const direct_counters& counters() const { return counters_; }

  /// Ring frames read in a row before the TAP is read once (fairness to the host).
  static constexpr unsigned ring_burst = 16;

 private:
  long write_direct(const lane_table& t, std::span<const iovec> iov);
  void write_learning_frame(const tap::mac_address& mac);
  long read_inbound(const lane_table& t, std::span<std::byte> buf);
  /// Clears the doorbell, then pops once more (a frame pushed meanwhile).
  long clear_and_look_again(const lane_table& t, std::span<std::byte> buf);
  /// Counts a frame read from a ring (n > 0); returns n.
  long counted(long n);
  long pop_any(const lane_table& t, std::span<std::byte> buf);
  /// Brackets a call of the worker: odd while one runs (see publish()).
  void enter();
  void leave();

  std::unique_ptr<platform::frame_port> tap_;
  doorbell bell_;
  int epoll_fd_ = -1;
  std::atomic<const lane_table*> table_{nullptr};
  alignas(64) std::atomic<std::uint64_t> calls_{0};
  std::atomic<bool> learning_due_{false};
  // The worker's own state.
  std::size_t next_inbound_ = 0;  ///< round robin over the inbound rings
  unsigned ring_run_ = 0;         ///< ring frames read since the TAP was last read
  std::uint64_t bell_seen_ = 0;   ///< the doorbell's count when last cleared
  bool found_nothing_ = false;    ///< the last read found the rings and the TAP empty
  direct_counters counters_;
};

}  // namespace unetback::direct
