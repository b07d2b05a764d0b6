#pragma once
// One queue of a multi-queue TAP: a non-blocking fd whose frames carry a
// virtio_net_hdr prefix of vnet_hdr_size bytes. Implements the data path's
// frame_port seam.

#include <sys/uio.h>

#include <cstddef>
#include <span>

#include "unetback/platform/frame_port.hpp"

namespace unetback::tap {

/// Bytes of virtio_net_hdr before every frame: 12, the size of
/// virtio_net_hdr_v1 / virtio_net_hdr_mrg_rxbuf (the 10-byte
/// virtio_net_hdr plus num_buffers). The kernel fills only the first 10
/// bytes on read and ignores the last 2 on write: num_buffers is
/// meaningless here and must be ignored by readers.
inline constexpr std::size_t vnet_hdr_size = 12;

/// A TAP queue fd (owned, closed on destruction).
class tap_queue final : public platform::frame_port {
 public:
  /// Takes ownership of `fd`, a /dev/net/tun fd attached to the device with
  /// IFF_VNET_HDR; makes it non-blocking.
  explicit tap_queue(int fd);
  ~tap_queue() override;
  tap_queue(const tap_queue&) = delete;
  tap_queue& operator=(const tap_queue&) = delete;

  [[nodiscard]] int fd() const override { return fd_; }
  [[nodiscard]] std::size_t vnet_hdr_size() const override { return tap::vnet_hdr_size; }
  /// read(2) of one frame: its length, 0 if none is queued, -errno on error
  /// (-EBADFD while the queue is detached). A frame longer than `buf` is
  /// truncated by the kernel: size `buf` for vnet header + 64 KiB.
  long read_frame(std::span<std::byte> buf) override;
  /// writev(2) of one frame, vnet header first: bytes written, 0 if the
  /// kernel asked to retry (EAGAIN), -errno on error (-EINVAL for a vnet
  /// header the kernel rejects).
  long write_frame(std::span<const iovec> iov) override;
  /// TUNSETCARRIER on this queue's fd (any attached queue sets the device's).
  long set_carrier(bool on) override;

  /// TUNSETQUEUE: attaches (true) or detaches (false) this queue. A detached
  /// queue receives nothing and keeps the device alive.
  void set_enabled(bool enabled);

 private:
  int fd_;
};

}  // namespace unetback::tap
