#include "net.hpp"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace unetback::payload_check {

namespace {

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

const sockaddr* as_sockaddr(const sockaddr_in& ep) {
  return reinterpret_cast<const sockaddr*>(&ep);
}

fd_owner make_socket(int type) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw_errno("socket");
  }
  return fd_owner(fd);
}

}  // namespace

sockaddr_in parse_endpoint(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument("endpoint must be A.B.C.D:PORT: " + text);
  }
  sockaddr_in ep{};
  ep.sin_family = AF_INET;
  const unsigned long port = std::stoul(text.substr(colon + 1));
  if (port == 0 || port > 65535 ||
      ::inet_pton(AF_INET, text.substr(0, colon).c_str(), &ep.sin_addr) != 1) {
    throw std::invalid_argument("bad endpoint: " + text);
  }
  ep.sin_port = htons(static_cast<std::uint16_t>(port));
  return ep;
}

fd_owner tcp_accept_one(const sockaddr_in& ep, std::chrono::seconds timeout) {
  fd_owner listener = make_socket(SOCK_STREAM);
  const int one = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listener.get(), as_sockaddr(ep), sizeof ep) != 0) {
    throw_errno("bind");
  }
  if (::listen(listener.get(), 1) != 0) {
    throw_errno("listen");
  }
  pollfd p{listener.get(), POLLIN, 0};
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  if (::poll(&p, 1, static_cast<int>(ms)) != 1) {
    throw std::runtime_error("no connection within the timeout");
  }
  const int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) {
    throw_errno("accept");
  }
  return fd_owner(fd);
}

fd_owner tcp_connect(const sockaddr_in& ep, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    fd_owner s = make_socket(SOCK_STREAM);
    if (::connect(s.get(), as_sockaddr(ep), sizeof ep) == 0) {
      return s;
    }
    if (errno != ECONNREFUSED || std::chrono::steady_clock::now() > deadline) {
      throw_errno("connect");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

fd_owner udp_bind(const sockaddr_in& ep, int rcvbuf) {
  fd_owner s = make_socket(SOCK_DGRAM);
  ::setsockopt(s.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (::bind(s.get(), as_sockaddr(ep), sizeof ep) != 0) {
    throw_errno("bind");
  }
  return s;
}

fd_owner udp_connect(const sockaddr_in& ep) {
  fd_owner s = make_socket(SOCK_DGRAM);
  if (::connect(s.get(), as_sockaddr(ep), sizeof ep) != 0) {
    throw_errno("connect");
  }
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace unetback::payload_check
