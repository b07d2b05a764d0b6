#include "unetback/test_support/socket_frame_port.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace unetback::test_support {

socket_frame_port::socket_frame_port(int fd, std::size_t vnet_hdr_size)
    : fd_(fd), vnet_hdr_size_(vnet_hdr_size) {
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) {
    (void)::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  }
}

socket_frame_port::~socket_frame_port() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

long socket_frame_port::read_frame(std::span<std::byte> buf) {
  const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
  if (n >= 0) {
    return static_cast<long>(n);
  }
  return errno == EAGAIN ? 0 : -errno;  // EWOULDBLOCK == EAGAIN on Linux
}

long socket_frame_port::write_frame(std::span<const iovec> iov) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov.data());  // sendmsg does not write through it
  msg.msg_iovlen = iov.size();
  const ssize_t n = ::sendmsg(fd_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n >= 0) {
    return static_cast<long>(n);
  }
  return (errno == EAGAIN || errno == ENOBUFS) ? 0 : -errno;
}

}  // namespace unetback::test_support
