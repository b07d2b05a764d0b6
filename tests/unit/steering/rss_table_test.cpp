// The folded Toeplitz table the steering program reads computes exactly
// rings::toeplitz_hash, for the Microsoft RSS verification vectors and for
// random keys and inputs of every hash-input length.

#include <gtest/gtest.h>

#include <random>

#include "unetback/rings/toeplitz.hpp"
#include "unetback/steering/rss_table.hpp"

namespace unetback::steering {
namespace {

// The Microsoft RSS verification key (also netfront-sim's).
constexpr std::array<std::uint8_t, 40> ms_key{
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

rings::hash_config toeplitz_config(const std::array<std::uint8_t, 40>& key) {
  rings::hash_config c;
  c.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
  c.flags = rings::supported_hash_types;
  c.key = key;
  return c;
}

TEST(RssTable, FoldedHashMatchesMicrosoftVerificationVectorIpv4Tcp) {
  // 66.9.149.187:2794 -> 161.142.100.80:1766, hash 0x51ccc178 (Microsoft RSS).
  const std::array<std::uint8_t, 12> input{66,  9,  149,  187,  161,  142,
                                           100, 80, 0x0a, 0xea, 0x06, 0xe6};
  const auto table = make_rss_table(toeplitz_config(ms_key));
  EXPECT_EQ(folded_hash(*table, std::as_bytes(std::span(input))), 0x51ccc178U);
}

TEST(RssTable, FoldedHashMatchesToeplitzForRandomKeysAndEveryInputLength) {
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<unsigned> byte(0, 255);
  for (int round = 0; round < 20; ++round) {
    std::array<std::uint8_t, 40> key{};
    for (auto& k : key) {
      k = static_cast<std::uint8_t>(byte(rng));
    }
    const auto table = make_rss_table(toeplitz_config(key));
    for (const std::size_t length : {8U, 12U, 32U, 36U}) {
      std::vector<std::byte> input(length);
      for (auto& b : input) {
        b = static_cast<std::byte>(byte(rng));
      }
      EXPECT_EQ(folded_hash(*table, input), rings::toeplitz_hash(key, input))
          << "round " << round << " length " << length;
    }
  }
}

TEST(RssTable, CarriesTheGuestsFlagsAndMapping) {
  rings::hash_config c = toeplitz_config(ms_key);
  c.flags = XEN_NETIF_CTRL_HASH_TYPE_IPV4;
  c.mapping_size = 3;
  c.mapping[0] = 2;
  c.mapping[1] = 0;
  c.mapping[2] = 1;
  const auto table = make_rss_table(c);
  EXPECT_EQ(table->flags, static_cast<std::uint32_t>(XEN_NETIF_CTRL_HASH_TYPE_IPV4));
  EXPECT_EQ(table->mapping_size, 3U);
  EXPECT_EQ(table->mapping[0], 2U);
  EXPECT_EQ(table->mapping[2], 1U);
}

}  // namespace
}  // namespace unetback::steering
