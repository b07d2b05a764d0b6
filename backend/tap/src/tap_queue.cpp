#include "unetback/tap/tap_queue.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <system_error>

#include "tun_fd.hpp"

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
  return detail::tun_set_carrier(fd_, on);
}

void tap_queue::set_enabled(bool enabled) {
  detail::tun_set_queue_attached(fd_, enabled);
}

}  // namespace unetback::tap
