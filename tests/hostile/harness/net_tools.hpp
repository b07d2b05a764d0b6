#pragma once
// Network helpers that need no external tools (the tier must not depend on
// ping or mausezahn): sockets opened inside a named network namespace,
//  * traffic_monitor: the well-behaved guest sends a UDP datagram every few
//    milliseconds to an echo server in the host namespace while an attack
//    runs; the monitor counts the echoes (the "second guest keeps passing
//    traffic" check);
//  * raw_port: an AF_PACKET socket on a host-side interface, to inject
//    frames towards a guest (flooding its RX ring) or capture what a guest
//    transmitted.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace unetback::hostile {

using mac_bytes = std::array<std::uint8_t, 6>;

/// Parses "aa:bb:cc:dd:ee:ff" (throws std::invalid_argument).
[[nodiscard]] mac_bytes parse_mac(const std::string& text);

/// Creates a socket(domain, type, protocol) inside network namespace `ns`
/// (/run/netns/NAME). The socket stays in that namespace. Throws on failure.
[[nodiscard]] int socket_in_netns(const std::string& ns, int domain, int type, int protocol);

/// What a traffic_monitor saw.
struct traffic_result {
  std::uint32_t sent = 0;
  std::uint32_t received = 0;
  [[nodiscard]] double ratio() const { return sent == 0 ? 0.0 : double(received) / sent; }
};

/// UDP echo between `client_ns` (client_ip) and `server_ns` (server_ip).
class traffic_monitor {
 public:
  traffic_monitor(const std::string& client_ns, const std::string& client_ip,
                  const std::string& server_ns, const std::string& server_ip);
  ~traffic_monitor();
  traffic_monitor(const traffic_monitor&) = delete;
  traffic_monitor& operator=(const traffic_monitor&) = delete;

  /// Sends `count` probes `interval` apart and waits for the echoes (blocking).
  traffic_result probe(std::uint32_t count, std::chrono::milliseconds interval);
  /// Starts probing in the background (one probe every `interval`).
  void start(std::chrono::milliseconds interval = std::chrono::milliseconds(20));
  /// Stops the background probes; what they saw.
  traffic_result stop();

 private:
  void echo_loop();
  void send_loop(std::chrono::milliseconds interval);
  void receive_pending(std::chrono::milliseconds wait);

  int server_fd_ = -1;
  int client_fd_ = -1;
  int stop_fd_ = -1;
  std::atomic<bool> running_{false};
  std::thread echo_;
  std::thread sender_;
  std::uint32_t seq_ = 0;
  std::atomic<std::uint32_t> sent_{0};  ///< probes attempted (read by stop())
  std::vector<bool> seen_;
  traffic_result result_;
};

/// An AF_PACKET socket bound to interface `ifname` in namespace `ns`.
class raw_port {
 public:
  raw_port(const std::string& ns, const std::string& ifname);
  ~raw_port();
  raw_port(const raw_port&) = delete;
  raw_port& operator=(const raw_port&) = delete;

  /// Sends one Ethernet frame; false if the kernel refused it.
  bool send(std::span<const std::uint8_t> frame);
  /// Receives one frame within `timeout`; nullopt if none.
  std::optional<std::vector<std::uint8_t>> receive(std::chrono::milliseconds timeout);
  /// Only frames whose source MAC is `mac` are returned by receive().
  void filter_source(const mac_bytes& mac) { filter_ = mac; }

 private:
  int fd_ = -1;
  int ifindex_ = 0;
  std::optional<mac_bytes> filter_;
};

/// An Ethernet frame dst <- src with ethertype 0x88B5 (IEEE local
/// experimental: no host stack parses it) and `len` bytes in total, filled
/// with a pattern derived from `seed`.
[[nodiscard]] std::vector<std::uint8_t> test_frame(const mac_bytes& dst, const mac_bytes& src,
                                                   std::size_t len, std::uint8_t seed);

}  // namespace unetback::hostile
