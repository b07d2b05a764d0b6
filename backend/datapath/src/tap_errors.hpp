#pragma once
// TAP queue errors that mean the interface is gone for good (an operator ran
// `ip link del vifD.N`, or the bridge script removed it): the kernel detaches
// every queue fd, reads and writes fail with EBADFD (tun_chr_read_iter /
// tun_chr_write_iter) and poll() reports POLLERR for ever. A worker seeing one
// must stop and report a fault for its vif (the control plane releases the
// vif's resources), never retry: retrying would spin on POLLERR.
// EIO is NOT "gone": tun_get_user fails writes with EIO while the interface
// is merely down, and the stock vif-bridge script takes the TAP down and up
// again while the guest already sends: that stays a per-packet drop.

#include <cerrno>

namespace unetback::datapath {

/// The fault reason reported when the TAP queue is gone.
inline constexpr const char* tap_gone_fault = "TAP interface gone (deleted?): queue fd detached";

/// True for a -errno from frame_port read/write that means "interface gone".
[[nodiscard]] inline bool tap_gone(long negative_errno) {
  const long e = -negative_errno;
  return e == EBADFD || e == ENODEV || e == ENXIO;
}

}  // namespace unetback::datapath
