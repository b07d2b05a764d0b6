#pragma once
// One queue of a vif for the direct path's tests: its direct_port over a
// socketpair standing in for its TAP, the test holding the host's end.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <vector>

#include "test_frames.hpp"
#include "test_guests.hpp"
#include "unetback/direct/direct_port.hpp"
#include "unetback/test_support/socket_frame_port.hpp"

namespace unetback::direct::test {

using rings::test::frame;

inline constexpr std::size_t vnet_bytes = 12;

/// A frame from guest A to guest B: UDP over IPv4, `payload` bytes.
inline frame a_to_b(std::size_t payload) {
  return rings::test::ipv4_frame(rings::ipproto_udp, rings::test::ip_a, rings::test::ip_b,
                                 rings::test::udp_datagram(1, 2, payload));
}

/// One queue: its direct port over a socketpair, the test holding the host's end.
struct queue_end {
  int host_fd = -1;
  std::unique_ptr<direct_port> port;

  queue_end() {
    std::array<int, 2> sv{};
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv.data()), 0);
    host_fd = sv[1];
    port = std::make_unique<direct_port>(
        std::make_unique<test_support::socket_frame_port>(sv[0], vnet_bytes));
  }
  ~queue_end() {
    port->publish(nullptr);
    ::close(host_fd);
  }
  queue_end(const queue_end&) = delete;
  queue_end& operator=(const queue_end&) = delete;

  /// What the worker's TX path writes: a zero vnet header, then the frame.
  long write(const frame& f) const {
    std::array<std::byte, vnet_bytes> hdr{};
    const std::array<iovec, 2> iov{iovec{hdr.data(), hdr.size()},
                                   iovec{const_cast<std::byte*>(f.data()), f.size()}};
    return port->write_frame(iov);
  }
  /// The next frame the worker would read, without its vnet header; empty if none.
  frame read() const {
    std::vector<std::byte> buf(70'000);
    const long n = port->read_frame(buf);
    EXPECT_GE(n, 0);
    if (n <= static_cast<long>(vnet_bytes)) {
      return {};
    }
    return {buf.begin() + vnet_bytes, buf.begin() + n};
  }
  /// The next frame that reached the host through the TAP; empty if none.
  frame host_received() const {
    std::vector<std::byte> buf(70'000);
    const ssize_t n = ::recv(host_fd, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n <= static_cast<ssize_t>(vnet_bytes)) {
      return {};
    }
    return {buf.begin() + vnet_bytes, buf.begin() + n};
  }
  /// The host sends `f` to the guest through the TAP.
  void host_sends(const frame& f) const {
    std::vector<std::byte> msg(vnet_bytes);
    msg.insert(msg.end(), f.begin(), f.end());
    ASSERT_EQ(::send(host_fd, msg.data(), msg.size(), 0), static_cast<ssize_t>(msg.size()));
  }
  [[nodiscard]] bool readable() const {
    pollfd p{port->fd(), POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }
};

/// `f` with destination `to` and source `from`.
inline frame addressed(frame f, const tap::mac_address& to, const tap::mac_address& from) {
  for (std::size_t i = 0; i < 6; ++i) {
    f[i] = std::byte{to[i]};
    f[6 + i] = std::byte{from[i]};
  }
  return f;
}

}  // namespace unetback::direct::test
