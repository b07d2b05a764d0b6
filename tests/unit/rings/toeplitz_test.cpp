// Toeplitz hash against the Microsoft RSS verification suite, and the hash
// input chosen per enabled hash type.

#include "unetback/rings/toeplitz.hpp"

#include <gtest/gtest.h>

#include "test_frames.hpp"

namespace unetback::rings {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace): frame builders

// "Verifying the RSS Hash Calculation" (Microsoft Windows driver docs).
constexpr std::array<std::uint8_t, 40> rss_key{
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

struct v4_vector {
  std::array<std::uint8_t, 4> dst;
  std::uint16_t dport;
  std::array<std::uint8_t, 4> src;
  std::uint16_t sport;
  std::uint32_t ip_hash;
  std::uint32_t tcp_hash;
};

constexpr v4_vector v4_vectors[] = {
    {{161, 142, 100, 80}, 1766, {66, 9, 149, 187}, 2794, 0x323e8fc2, 0x51ccc178},
    {{65, 69, 140, 83}, 4739, {199, 92, 111, 2}, 14230, 0xd718262a, 0xc626b0ea},
    {{12, 22, 207, 184}, 38024, {24, 19, 198, 95}, 12898, 0xd2d0a5de, 0x5c2b394a},
    {{209, 142, 163, 6}, 2217, {38, 27, 205, 30}, 48228, 0x82989176, 0xafc7327f},
    {{202, 188, 127, 2}, 1303, {153, 39, 163, 191}, 44251, 0x5d1809c5, 0x10e828a2},
};

using v6_addr = std::array<std::uint8_t, 16>;
struct v6_vector {
  v6_addr dst;
  std::uint16_t dport;
  v6_addr src;
  std::uint16_t sport;
  std::uint32_t ip_hash;
  std::uint32_t tcp_hash;
};

constexpr v6_vector v6_vectors[] = {
    // 3ffe:2501:200:3::1 (1766) <- 3ffe:2501:200:1fff::7 (2794)
    {{0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 1},
     1766,
     {0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 7},
     2794,
     0x2cc18cd5,
     0x40207d3d},
    // ff02::1 (4739) <- 3ffe:501:8::260:97ff:fe40:efab (14230)
    {{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
     4739,
     {0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97, 0xff, 0xfe, 0x40, 0xef, 0xab},
     14230,
     0x0f0c461c,
     0xdde51bbf},
    // fe80::200:f8ff:fe21:67cf (38024) <- 3ffe:1900:4545:3:200:f8ff:fe21:67cf (44251)
    {{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf},
     38024,
     {0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67,
      0xcf},
     44251,
     0x4b61e985,
     0x02d1feef},
};

std::uint32_t hash_of(const frame& f, std::uint32_t flags) {
  const auto in = build_hash_input(f, flags);
  EXPECT_TRUE(in.has_value());
  return in ? toeplitz_hash(rss_key, in->data()) : 0;
}

TEST(Toeplitz, ToeplitzMatchesRssVerificationVectorsIpv4) {
  for (const auto& v : v4_vectors) {
    const frame f = ipv4_frame(ipproto_tcp, v.src, v.dst, tcp_segment(v.sport, v.dport, 0x10, 0));
    EXPECT_EQ(hash_of(f, XEN_NETIF_CTRL_HASH_TYPE_IPV4), v.ip_hash);
    EXPECT_EQ(hash_of(f, XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP), v.tcp_hash);
  }
}

TEST(Toeplitz, ToeplitzMatchesRssVerificationVectorsIpv6) {
  for (const auto& v : v6_vectors) {
    const frame f = ipv6_frame(ipproto_tcp, v.src, v.dst, tcp_segment(v.sport, v.dport, 0x10, 0));
    EXPECT_EQ(hash_of(f, XEN_NETIF_CTRL_HASH_TYPE_IPV6), v.ip_hash);
    EXPECT_EQ(hash_of(f, XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP), v.tcp_hash);
  }
}

TEST(Toeplitz, MaximalEnabledTypeWins) {
  const std::uint32_t both = XEN_NETIF_CTRL_HASH_TYPE_IPV4 | XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP;
  const frame tcp = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 0));
  const frame udp = ipv4_frame(ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 10));
  EXPECT_EQ(build_hash_input(tcp, both)->type, _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
  EXPECT_EQ(build_hash_input(tcp, both)->length, 12U);
  EXPECT_EQ(build_hash_input(udp, both)->type, _XEN_NETIF_CTRL_HASH_TYPE_IPV4);
  EXPECT_EQ(build_hash_input(udp, both)->length, 8U);
}

TEST(Toeplitz, NoApplicableTypeMeansNoHash) {
  const frame udp = ipv4_frame(ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 10));
  EXPECT_FALSE(build_hash_input(udp, XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP));
  const frame v6 = ipv6_frame(ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x10, 0));
  EXPECT_FALSE(
      build_hash_input(v6, XEN_NETIF_CTRL_HASH_TYPE_IPV4 | XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP));
  frame arp = ethernet(0x0806);
  arp.resize(60);
  EXPECT_FALSE(build_hash_input(arp, 0xFU));
}

TEST(Toeplitz, TcpFragmentHashesAddressesOnly) {
  const frame f = ipv4_frame(ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 0), false, 0x2000);
  const std::uint32_t both = XEN_NETIF_CTRL_HASH_TYPE_IPV4 | XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP;
  EXPECT_EQ(build_hash_input(f, both)->type, _XEN_NETIF_CTRL_HASH_TYPE_IPV4);
}

TEST(Toeplitz, MissingKeyOctetsAreZero) {
  const std::array<std::byte, 4> input{std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF},
                                       std::byte{0xFF}};
  std::array<std::uint8_t, 40> padded{};
  padded[0] = 0x80;
  EXPECT_EQ(toeplitz_hash(std::span<const std::uint8_t>(padded.data(), 1), input),
            toeplitz_hash(padded, input));
  EXPECT_EQ(toeplitz_hash({}, input), 0U);  // empty key: hash is always zero
}

}  // namespace
}  // namespace unetback::rings
