#pragma once
// Sockets for payload-check: IPv4 endpoints "A.B.C.D:PORT", TCP listen/accept
// and connect (with retries while the listener starts), UDP bind/connect.
// Every failure throws std::system_error naming the call and the endpoint.

#include <netinet/in.h>

#include <chrono>
#include <string>

#include "unetback/tap/unique_fd.hpp"

namespace unetback::payload_check {

/// An owned file descriptor.
using fd_owner = tap::unique_fd;

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
