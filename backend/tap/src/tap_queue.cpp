#include "unetback/tap/tap_queue.hpp"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <system_error>

namespace unetback::tap {

tap_queue::tap_queue(int fd) : fd_(fd) {
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::system_error(err, std::generic_category(), "tap queue O_NONBLOCK");
  }
}

tap_queue::~tap_queue() {
  ::close(fd_);
}

long tap_queue::read_frame(std::span<std::byte> buf) {
  const ssize_t n = ::read(fd_, buf.data(), buf.size());
  if (n >= 0) {
    return static_cast<long>(n);
  }
  if (errno == EAGAIN || errno == EINTR) {
    return 0;
  }
  return -static_cast<long>(errno);
}

long tap_queue::write_frame(std::span<const iovec> iov) {
  if (iov.size() > static_cast<std::size_t>(IOV_MAX)) {
    return -static_cast<long>(EINVAL);
  }
  const ssize_t n = ::writev(fd_, iov.data(), static_cast<int>(iov.size()));
  if (n >= 0) {
    return static_cast<long>(n);
  }
  if (errno == EAGAIN || errno == EINTR) {
    return 0;
  }
  return -static_cast<long>(errno);
}

long tap_queue::set_carrier(bool on) {
  int value = on ? 1 : 0;
  return ::ioctl(fd_, TUNSETCARRIER, &value) == 0 ? 0 : -static_cast<long>(errno);
}

void tap_queue::set_enabled(bool enabled) {
  ifreq ifr{};
  ifr.ifr_flags = static_cast<short>(enabled ? IFF_ATTACH_QUEUE : IFF_DETACH_QUEUE);
  if (::ioctl(fd_, TUNSETQUEUE, &ifr) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            enabled ? "TUNSETQUEUE attach" : "TUNSETQUEUE detach");
  }
}

}  // namespace unetback::tap
