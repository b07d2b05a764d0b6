#pragma once
// The guest's network device: a multi-queue TAP with vnet headers, created in
// the guest's network namespace, one frame_port per queue. (A local opener:
// netfront-sim only needs create-in-netns, vnet_hdr, offloads, MTU and up.)

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "unetback/platform/frame_port.hpp"
#include "unetback/sim/netfront/tx_queue_select.hpp"

namespace unetback::sim {

struct guest_tap_options {
  std::string netns;  ///< /run/netns/<netns>; empty: our own namespace
  std::string ifname = "eth0";
  std::uint32_t queues = 1;
  unsigned offload_flags = 0;  ///< TUNSETOFFLOAD: what we accept from the guest stack
  std::optional<std::uint32_t> mtu;
  std::optional<std::string> mac;  ///< "aa:bb:cc:dd:ee:ff" (the frontend's mac key)
  bool up = true;                  ///< set IFF_UP
  /// The TX queue of each frame the guest stack sends (benchmark lever).
  tx_queue_select tx_select = tx_queue_select::flow;
};

/// Creates (or attaches to) the TAP and returns one non-blocking port per
/// queue, each with a 12-byte virtio_net_hdr; with tx_queue_select::random
/// (and more than one queue) attaches the random steering program. Throws
/// std::system_error.
std::vector<std::unique_ptr<platform::frame_port>> open_guest_tap(const guest_tap_options& o);

/// A frame_port over one TAP queue fd (owned).
class tap_queue_port final : public platform::frame_port {
 public:
  explicit tap_queue_port(int fd) : fd_(fd) {}
  ~tap_queue_port() override;
  tap_queue_port(const tap_queue_port&) = delete;
  tap_queue_port& operator=(const tap_queue_port&) = delete;
  [[nodiscard]] int fd() const override { return fd_; }
  [[nodiscard]] std::size_t vnet_hdr_size() const override { return 12; }
  long read_frame(std::span<std::byte> buf) override;
  long write_frame(std::span<const iovec> iov) override;

 private:
  int fd_;
};

}  // namespace unetback::sim
