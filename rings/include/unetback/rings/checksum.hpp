#pragma once
// The Internet checksum (RFC 1071) over private frame memory, and the
// TCP/UDP pseudo-header sum. Linux convention for a partial-checksum packet
// (netif NETTXF_csum_blank, virtio VIRTIO_NET_HDR_F_NEEDS_CSUM): the L4
// checksum field holds the folded, non-inverted pseudo-header sum, and
// whoever completes it sums from csum_start to the end of the L4 payload.

#include <cstddef>
#include <cstdint>
#include <span>

#include "unetback/rings/packet_headers.hpp"

namespace unetback::rings {

/// Adds `data` to a ones'-complement accumulator, 16-bit big-endian words
/// (an odd trailing byte is padded with zero).
[[nodiscard]] constexpr std::uint64_t csum_add(std::span<const std::byte> data, std::uint64_t sum) {
  std::size_t i = 0;
  for (; i + 1 < data.size(); i += 2) {
    sum += static_cast<std::uint64_t>(static_cast<std::uint8_t>(data[i])) << 8 |
           static_cast<std::uint8_t>(data[i + 1]);
  }
  if (i < data.size()) {
    sum += static_cast<std::uint64_t>(static_cast<std::uint8_t>(data[i])) << 8;
  }
  return sum;
}

/// Folds an accumulator to 16 bits (not inverted).
[[nodiscard]] constexpr std::uint16_t csum_fold(std::uint64_t sum) {
  while ((sum >> 16) != 0) {
    sum = (sum & 0xFFFF) + (sum >> 16);
  }
  return static_cast<std::uint16_t>(sum);
}

/// Writes `value` big-endian at `off`.
constexpr void store_be16(std::span<std::byte> frame, std::size_t off, std::uint16_t value) {
  frame[off] = static_cast<std::byte>(value >> 8);
  frame[off + 1] = static_cast<std::byte>(value & 0xFF);
}

/// The folded, non-inverted pseudo-header sum of the transport segment
/// located by `l3`: source and destination addresses, protocol, and the L4
/// length (l4_end - l4_offset), as Linux csum_tcpudp_magic/csum_ipv6_magic
/// before their final inversion. This is the value a partial-checksum
/// packet carries in its checksum field.
[[nodiscard]] constexpr std::uint16_t pseudo_header_sum(std::span<const std::byte> frame,
                                                        const l3_layout& l3) {
  const std::size_t addr_off = l3.l3_offset + (l3.kind == l3_kind::ipv4 ? 12 : 8);
  const std::size_t addr_len = l3.kind == l3_kind::ipv4 ? 8 : 32;
  std::uint64_t sum = csum_add(frame.subspan(addr_off, addr_len), 0);
  sum += l3.l4_protocol;
  sum += static_cast<std::uint64_t>(l3.l4_end - l3.l4_offset);
  return csum_fold(sum);
}

/// Completes a partial checksum in place: sums the frame from `csum_start`
/// to `end` (the field already holds the pseudo-header seed) and stores the
/// inverted result at csum_start + csum_offset. `udp`: a zero result is sent
/// as 0xFFFF (RFC 768). Preconditions (checked by callers): csum_start <=
/// end <= frame.size() and csum_start + csum_offset + 2 <= end.
constexpr void complete_checksum(std::span<std::byte> frame, std::size_t csum_start,
                                 std::size_t csum_offset, std::size_t end, bool udp) {
  const auto segment = std::span<const std::byte>(frame).subspan(csum_start, end - csum_start);
  std::uint16_t csum = static_cast<std::uint16_t>(~csum_fold(csum_add(segment, 0)));
  if (udp && csum == 0) {
    csum = 0xFFFF;
  }
  store_be16(frame, csum_start + csum_offset, csum);
}

/// True iff the TCP/UDP checksum of the segment located by `l3`/`l4` is
/// correct (sum over pseudo-header and segment folds to 0xFFFF).
[[nodiscard]] constexpr bool l4_checksum_ok(std::span<const std::byte> frame, const l3_layout& l3) {
  const std::size_t addr_off = l3.l3_offset + (l3.kind == l3_kind::ipv4 ? 12 : 8);
  const std::size_t addr_len = l3.kind == l3_kind::ipv4 ? 8 : 32;
  std::uint64_t sum = csum_add(frame.subspan(addr_off, addr_len), 0);
  sum += l3.l4_protocol;
  sum += static_cast<std::uint64_t>(l3.l4_end - l3.l4_offset);
  sum = csum_add(frame.subspan(l3.l4_offset, l3.l4_end - l3.l4_offset), sum);
  return csum_fold(sum) == 0xFFFF;
}

}  // namespace unetback::rings
