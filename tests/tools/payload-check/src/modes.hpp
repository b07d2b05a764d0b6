#pragma once
// The four payload-check modes. Each returns its result as one JSON object
// (printed as one line by main) with "ok" telling whether the run met its
// contract: the whole stream intact (TCP receiver), no corrupted datagram
// (UDP receiver), everything handed to the kernel (senders).

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace unetback::payload_check {

/// Settings shared by the modes (main fills them from the command line).
struct mode_options {
  std::string endpoint;                     ///< A.B.C.D:PORT to connect to or listen on
  std::uint64_t bytes = 1U << 20U;          ///< stream length (TCP) or payload total (UDP send)
  std::uint64_t seed = 1;                   ///< payload and size seed (both ends must agree)
  std::size_t max_io = 65536;               ///< largest write()/read() (TCP)
  std::size_t max_datagram = 1472;          ///< largest UDP datagram, header included
  double rate_mbit = 0;                     ///< UDP send pacing (0: unpaced)
  unsigned timeout_s = 60;                  ///< TCP: idle limit; accept/connect limit
  unsigned idle_ms = 2000;                  ///< UDP receive: stop after this long without data
  int rcvbuf = 8 << 20;                     ///< UDP receive buffer
  std::uint64_t max_datagrams = 1U << 26U;  ///< bound on the receiver's sequence bitmap
};

/// Connects and writes `bytes` of the seed's stream in seeded random sizes.
[[nodiscard]] nlohmann::json tcp_send(const mode_options& o);
/// Accepts one connection and checks every byte against the seed's stream.
[[nodiscard]] nlohmann::json tcp_recv(const mode_options& o);
/// Sends datagrams {u64 seq, u64 offset, payload} until `bytes` of payload.
[[nodiscard]] nlohmann::json udp_send(const mode_options& o);
/// Receives datagrams until idle; counts unique, duplicate and corrupted ones.
[[nodiscard]] nlohmann::json udp_recv(const mode_options& o);

/// A 64-bit value as 16 lowercase hex digits.
[[nodiscard]] std::string hex64(std::uint64_t v);

}  // namespace unetback::payload_check
