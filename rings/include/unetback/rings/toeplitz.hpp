#pragma once
// The Toeplitz hash (docs/protocol.md §4.3; netif.h xen_netif_toeplitz_hash,
// the Microsoft RSS algorithm) and its input builder per hash type (§4.2):
//   IPV4      src, dst addresses             8 bytes
//   IPV4_TCP  src, dst, sport, dport        12 bytes
//   IPV6      src, dst addresses            32 bytes
//   IPV6_TCP  src, dst, sport, dport        36 bytes
// taken straight from the packet (network byte order). The "maximal" enabled
// type wins: the TCP 4-tuple for an unfragmented TCP packet when its type is
// enabled, else the address pair (Linux xenvif_set_skb_hash).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "unetback/rings/netif.hpp"
#include "unetback/rings/packet_headers.hpp"

namespace unetback::rings {

/// Toeplitz hash of `input` under `key`. Key bits beyond key.size() are zero
/// (netif.h: "any key octets not specified are assumed to be zero").
[[nodiscard]] constexpr std::uint32_t toeplitz_hash(std::span<const std::uint8_t> key,
                                                    std::span<const std::byte> input) {
  const auto key_byte = [&](std::size_t i) -> std::uint32_t {
    return i < key.size() ? key[i] : 0U;
  };
  // `window` holds the 32 key bits aligned with the current input bit.
  std::uint32_t window = key_byte(0) << 24 | key_byte(1) << 16 | key_byte(2) << 8 | key_byte(3);
  std::uint32_t hash = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const auto byte = static_cast<std::uint8_t>(input[i]);
    const std::uint32_t next = key_byte(i + 4);
    for (int bit = 7; bit >= 0; --bit) {
      if (((byte >> bit) & 1U) != 0) {
        hash ^= window;
      }
      window = window << 1 | ((next >> bit) & 1U);
    }
  }
  return hash;
}

/// The bytes to hash for one packet and the type they stand for.
struct hash_input {
  std::uint8_t type = 0;   ///< _XEN_NETIF_CTRL_HASH_TYPE_* bit number
  std::size_t length = 0;  ///< valid bytes in `bytes` (8, 12, 32 or 36)
  std::array<std::byte, 36> bytes{};

  /// The valid bytes.
  [[nodiscard]] std::span<const std::byte> data() const { return {bytes.data(), length}; }
};

namespace detail {

[[nodiscard]] inline hash_input make_hash_input(std::span<const std::byte> frame,
                                                const l3_layout& l3, bool with_ports,
                                                std::uint8_t type) {
  hash_input in;
  in.type = type;
  const bool v4 = l3.kind == l3_kind::ipv4;
  const std::size_t addr_len = v4 ? 8 : 32;
  const std::size_t addr_off = l3.l3_offset + (v4 ? 12 : 8);
  for (std::size_t i = 0; i < addr_len; ++i) {
    in.bytes[i] = frame[addr_off + i];
  }
  in.length = addr_len;
  if (with_ports) {
    for (std::size_t i = 0; i < 4; ++i) {
      in.bytes[addr_len + i] = frame[l3.l4_offset + i];
    }
    in.length += 4;
  }
  return in;
}

}  // namespace detail

/// The hash input for `frame` under the enabled XEN_NETIF_CTRL_HASH_TYPE_*
/// mask `flags`, or nullopt when no enabled type applies (no hash, no extra).
[[nodiscard]] inline std::optional<hash_input> build_hash_input(std::span<const std::byte> frame,
                                                                std::uint32_t flags) {
  const auto l3 = parse_l3(frame);
  if (!l3) {
    return std::nullopt;
  }
  const l3_layout& l = l3.value();
  const bool v4 = l.kind == l3_kind::ipv4;
  const std::uint32_t tcp_mask =
      v4 ? XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP : XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP;
  const std::uint32_t ip_mask = v4 ? XEN_NETIF_CTRL_HASH_TYPE_IPV4 : XEN_NETIF_CTRL_HASH_TYPE_IPV6;
  const auto l4 = parse_l4(frame, l);  // refuses fragments
  if ((flags & tcp_mask) != 0 && l4 && l4.value().protocol == ipproto_tcp) {
    return detail::make_hash_input(
        frame, l, true,
        v4 ? _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP : _XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP);
  }
  if ((flags & ip_mask) != 0) {
    return detail::make_hash_input(
        frame, l, false, v4 ? _XEN_NETIF_CTRL_HASH_TYPE_IPV4 : _XEN_NETIF_CTRL_HASH_TYPE_IPV6);
  }
  return std::nullopt;
}

}  // namespace unetback::rings
