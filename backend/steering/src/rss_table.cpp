#include "unetback/steering/rss_table.hpp"

#include <algorithm>
#include <cstddef>

namespace unetback::steering {

namespace {

/// The 32 key bits starting at bit `bit` (bit 0: the top bit of key[0]);
/// bits past the key are zero (netif.h: unspecified key octets are zero).
std::uint32_t key_window(std::span<const std::uint8_t> key, std::size_t bit) {
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    const std::size_t at = bit / 8 + i;
    bits = bits << 8 | (at < key.size() ? key[at] : 0U);
  }
  return static_cast<std::uint32_t>(bits >> (8 - bit % 8));
}

}  // namespace

std::unique_ptr<unetback_rss_table> make_rss_table(const rings::hash_config& config) {
  auto table = std::make_unique<unetback_rss_table>();
  table->flags = config.flags;
  table->mapping_size = std::min<std::uint32_t>(config.mapping_size, UNETBACK_RSS_MAX_MAPPING);
  std::copy_n(config.mapping.begin(), UNETBACK_RSS_MAX_MAPPING, table->mapping);
  for (std::size_t i = 0; i < UNETBACK_RSS_MAX_INPUT; ++i) {
    std::array<std::uint32_t, 8> bit_windows{};  // [b]: window for the byte's bit 7-b
    for (std::size_t b = 0; b < 8; ++b) {
      bit_windows[b] = key_window(config.key, i * 8 + b);
    }
    for (std::uint32_t v = 0; v < 256; ++v) {
      std::uint32_t h = 0;
      for (std::size_t b = 0; b < 8; ++b) {
        if (((v >> (7 - b)) & 1U) != 0) {
          h ^= bit_windows[b];
        }
      }
      table->toeplitz[i][v] = h;
    }
  }
  return table;
}

std::uint32_t folded_hash(const unetback_rss_table& table, std::span<const std::byte> input) {
  std::uint32_t hash = 0;
  const std::size_t n = std::min<std::size_t>(input.size(), UNETBACK_RSS_MAX_INPUT);
  for (std::size_t i = 0; i < n; ++i) {
    hash ^= table.toeplitz[i][static_cast<std::uint8_t>(input[i])];
  }
  return hash;
}

}  // namespace unetback::steering
