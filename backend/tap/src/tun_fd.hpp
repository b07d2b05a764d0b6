#pragma once
// ioctls on one /dev/net/tun fd, shared by the device's control fd
// (tap_device) and the data path's queue fds (tap_queue).

namespace unetback::tap::detail {

/// TUNSETCARRIER: any attached fd sets the device's carrier. 0 or -errno
/// (the data path reports it instead of throwing).
[[nodiscard]] long tun_set_carrier(int fd, bool on);

/// TUNSETQUEUE: attaches or detaches `fd` as a queue. Throws std::system_error.
void tun_set_queue_attached(int fd, bool attached);

}  // namespace unetback::tap::detail
