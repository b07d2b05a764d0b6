#pragma once
// The frame-port seam: where Ethernet frames leave and enter the daemon. In
// production, one queue of the multi-queue TAP vif<domid>.<devid> opened with
// IFF_VNET_HDR; in unit tests and fuzzers a SOCK_SEQPACKET socketpair.
// Every frame carries a struct virtio_net_hdr prefix (vnet_hdr_size() bytes).

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace unetback::platform {

/// What write_frame() amounts to, for a caller that issues many writes in
/// one go (io_uring): writev(fd(), iov) on a TAP, sendmsg(fd(), iov,
/// MSG_DONTWAIT | MSG_NOSIGNAL) on a socket; other: call write_frame().
enum class frame_write_op : std::uint8_t { other, writev, sendmsg };

class frame_port {
 public:
  virtual ~frame_port() = default;
  /// Non-blocking fd, readable when a frame is queued.
  [[nodiscard]] virtual int fd() const = 0;
  /// Bytes of virtio_net_hdr that prefix every frame (10 or 12).
  [[nodiscard]] virtual std::size_t vnet_hdr_size() const = 0;
  /// Reads one frame (vnet header included) into `buf`. Returns its length,
  /// 0 if none is queued (EAGAIN), or -errno on error.
  virtual long read_frame(std::span<std::byte> buf) = 0;
  /// Writes one frame (vnet header first) gathered from `iov`. Returns bytes
  /// written, 0 if the port is full (EAGAIN), or -errno on error.
  virtual long write_frame(std::span<const iovec> iov) = 0;
  /// The system call write_frame() is, with EAGAIN, EINTR and ENOBUFS read
  /// as 0 (the port is full) and other errors as -errno.
  [[nodiscard]] virtual frame_write_op write_op() const { return frame_write_op::other; }
  /// Sets the interface's carrier (TUNSETCARRIER on this queue's fd): off
  /// while the guest takes no frames, so the host stops queueing them.
  /// Returns 0 or -errno. Ports without a carrier (sockets) accept and ignore it.
  virtual long set_carrier(bool /*on*/) { return 0; }
};

}  // namespace unetback::platform
