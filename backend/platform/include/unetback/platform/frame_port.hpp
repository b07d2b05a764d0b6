#pragma once
// The frame-port seam: where Ethernet frames leave and enter the daemon. In
// production, one queue of the multi-queue TAP vif<domid>.<devid> opened with
// IFF_VNET_HDR; in unit tests and fuzzers a SOCK_SEQPACKET socketpair.
// Every frame carries a struct virtio_net_hdr prefix (vnet_hdr_size() bytes).

#include <sys/uio.h>

#include <cstddef>
#include <span>

namespace unetback::platform {

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
  /// Sets the interface's carrier (TUNSETCARRIER on this queue's fd): off
  /// while the guest takes no frames, so the host stops queueing them.
  /// Returns 0 or -errno. Ports without a carrier (sockets) accept and ignore it.
  virtual long set_carrier(bool /*on*/) { return 0; }
};

}  // namespace unetback::platform
