#pragma once
// Sockets for payload-check: IPv4 endpoints "A.B.C.D:PORT", TCP listen/accept
// and connect (with retries while the listener starts), UDP bind/connect.
// Every failure throws std::system_error naming the call and the endpoint.

#include <netinet/in.h>

#include <chrono>
#include <string>

namespace unetback::payload_check {

/// An owned file descriptor.
class fd_owner {
 public:
  fd_owner() = default;
  explicit fd_owner(int fd) : fd_(fd) {}
  ~fd_owner();
  fd_owner(fd_owner&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  fd_owner& operator=(fd_owner&& o) noexcept;
  fd_owner(const fd_owner&) = delete;
  fd_owner& operator=(const fd_owner&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_ = -1;
};

/// Parses "A.B.C.D:PORT". Throws std::invalid_argument.
[[nodiscard]] sockaddr_in parse_endpoint(const std::string& text);
/// Listens on `ep` and returns the first accepted connection; throws after `timeout`.
[[nodiscard]] fd_owner tcp_accept_one(const sockaddr_in& ep, std::chrono::seconds timeout);
/// Connects to `ep`, retrying refused connections until `timeout`.
[[nodiscard]] fd_owner tcp_connect(const sockaddr_in& ep, std::chrono::seconds timeout);
/// A UDP socket bound to `ep` with a receive buffer of `rcvbuf` bytes (best effort).
[[nodiscard]] fd_owner udp_bind(const sockaddr_in& ep, int rcvbuf);
/// A UDP socket connected to `ep`.
[[nodiscard]] fd_owner udp_connect(const sockaddr_in& ep);
/// Seconds since `start`, as a double.
[[nodiscard]] double seconds_since(std::chrono::steady_clock::time_point start);

}  // namespace unetback::payload_check
