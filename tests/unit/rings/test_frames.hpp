#pragma once
// Test helpers: page-aligned ring pages and a small Ethernet/IP/TCP/UDP frame
// builder, so tests read like the packets a guest sends.

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "unetback/rings/checksum.hpp"
#include "unetback/rings/shared_ring.hpp"

namespace unetback::rings::test {

/// One zeroed, page-aligned ring page.
struct alignas(4096) page_buffer {
  std::array<std::byte, 4096> bytes{};
  ring_page page() { return ring_page(bytes); }
};

using frame = std::vector<std::byte>;

inline void put8(frame& f, std::uint32_t v) {
  f.push_back(static_cast<std::byte>(v & 0xFF));
}
inline void put16(frame& f, std::uint32_t v) {
  put8(f, v >> 8);
  put8(f, v);
}
inline void put_bytes(frame& f, std::initializer_list<std::uint8_t> bytes) {
  for (auto b : bytes) {
    put8(f, b);
  }
}

template <std::size_t N>
void put_array(frame& f, const std::array<std::uint8_t, N>& bytes) {
  for (auto b : bytes) {
    put8(f, b);
  }
}

/// Ethernet header (dst 02:..:01, src 02:..:02), optional 802.1Q tag.
inline frame ethernet(std::uint16_t ethertype, bool vlan = false) {
  frame f;
  put_bytes(f, {0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02});
  if (vlan) {
    put16(f, 0x8100);
    put16(f, 42);
  }
  put16(f, ethertype);
  return f;
}

/// A TCP header (20 bytes, data offset 5) followed by `payload` bytes of 0x5A.
inline frame tcp_segment(std::uint16_t sport, std::uint16_t dport, std::uint8_t flags,
                         std::size_t payload) {
  frame f;
  put16(f, sport);
  put16(f, dport);
  put16(f, 0);
  put16(f, 1);  // seq
  put16(f, 0);
  put16(f, 0);  // ack
  put8(f, 5 << 4);
  put8(f, flags);
  put16(f, 0xFFFF);  // window
  put16(f, 0);       // checksum
  put16(f, 0);       // urgent
  f.insert(f.end(), payload, std::byte{0x5A});
  return f;
}

/// A UDP header followed by `payload` bytes of 0x33.
inline frame udp_datagram(std::uint16_t sport, std::uint16_t dport, std::size_t payload) {
  frame f;
  put16(f, sport);
  put16(f, dport);
  put16(f, static_cast<std::uint32_t>(8 + payload));
  put16(f, 0);
  f.insert(f.end(), payload, std::byte{0x33});
  return f;
}

/// Ethernet + IPv4 (IHL 5, header checksum set) + `l4`.
inline frame ipv4_frame(std::uint8_t proto, std::array<std::uint8_t, 4> src,
                        std::array<std::uint8_t, 4> dst, const frame& l4, bool vlan = false,
                        std::uint16_t frag = 0) {
  frame f = ethernet(0x0800, vlan);
  const std::size_t ip = f.size();
  put8(f, 0x45);
  put8(f, 0);
  put16(f, static_cast<std::uint32_t>(20 + l4.size()));
  put16(f, 0x1234);
  put16(f, frag);
  put8(f, 64);
  put8(f, proto);
  put16(f, 0);
  put_array(f, src);
  put_array(f, dst);
  const std::uint16_t csum = static_cast<std::uint16_t>(
      ~csum_fold(csum_add(std::span<const std::byte>(f).subspan(ip, 20), 0)));
  f[ip + 10] = static_cast<std::byte>(csum >> 8);
  f[ip + 11] = static_cast<std::byte>(csum & 0xFF);
  f.insert(f.end(), l4.begin(), l4.end());
  return f;
}

/// Ethernet + IPv6 + optional extension headers (each 8 bytes, given by their
/// next-header chain) + `l4`.
inline frame ipv6_frame(std::uint8_t proto, std::array<std::uint8_t, 16> src,
                        std::array<std::uint8_t, 16> dst, const frame& l4,
                        std::vector<std::uint8_t> ext_chain = {}, bool vlan = false) {
  frame f = ethernet(0x86DD, vlan);
  put8(f, 0x60);
  put_bytes(f, {0, 0, 0});
  put16(f, static_cast<std::uint32_t>(l4.size() + 8 * ext_chain.size()));
  put8(f, ext_chain.empty() ? proto : ext_chain.front());
  put8(f, 64);
  put_array(f, src);
  put_array(f, dst);
  for (std::size_t i = 0; i < ext_chain.size(); ++i) {
    put8(f, i + 1 < ext_chain.size() ? ext_chain[i + 1] : proto);
    put8(f, 0);  // 8 bytes long
    put_bytes(f, {0, 0, 0, 0, 0, 0});
  }
  f.insert(f.end(), l4.begin(), l4.end());
  return f;
}

inline constexpr std::array<std::uint8_t, 4> ip_a{10, 0, 0, 1};
inline constexpr std::array<std::uint8_t, 4> ip_b{10, 0, 0, 2};
inline constexpr std::array<std::uint8_t, 16> ip6_a{0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                                                    0,    0,    0, 0, 0, 0, 0, 1};
inline constexpr std::array<std::uint8_t, 16> ip6_b{0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                                                    0,    0,    0, 0, 0, 0, 0, 2};

inline std::uint16_t be16(const frame& f, std::size_t off) {
  return static_cast<std::uint16_t>(static_cast<std::uint8_t>(f[off]) << 8 |
                                    static_cast<std::uint8_t>(f[off + 1]));
}

}  // namespace unetback::rings::test
