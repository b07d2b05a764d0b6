#pragma once
// A bounded, allocation-free parser for the L2-L4 headers of an Ethernet
// frame held in PRIVATE memory (never a guest page): Ethernet, at most one
// VLAN tag, IPv4 (IHL checked) or IPv6 (with a bounded walk of extension
// headers), then TCP or UDP. Used to place checksum offsets for the TAP's
// virtio_net_hdr (docs/protocol.md §3.6) and to build Toeplitz hash input
// (§4.2). Every offset it returns lies inside the frame.

#include <cstddef>
#include <cstdint>
#include <span>

#include "unetback/rings/result.hpp"

namespace unetback::rings {

/// Why a frame's headers were refused.
enum class packet_error : std::uint8_t {
  truncated_ethernet,        ///< shorter than 14 bytes (18 with a VLAN tag)
  not_ip,                    ///< ethertype is neither IPv4 nor IPv6
  bad_ipv4_header,           ///< version, IHL or total length inconsistent with the frame
  bad_ipv6_header,           ///< version or payload length inconsistent (jumbograms refused)
  ipv6_ext_chain_too_long,   ///< more extension headers than we walk, or one runs past the end
  fragment,                  ///< an IP fragment: no L4 header to offload
  not_tcp_or_udp,            ///< checksum/GSO offload on another transport
  bad_tcp_header,            ///< data offset < 5 or header past the IP payload
  bad_udp_header,            ///< shorter than 8 bytes
  gso_not_tcp,               ///< GSO on a non-TCP packet
  gso_ip_version_mismatch,   ///< GSO TCPV4 on IPv6 or TCPV6 on IPv4
  bad_gso,                   ///< GSO size 0 or an unsupported GSO type
  bad_csum_location,         ///< csum_start/csum_offset outside the frame
  gso_without_partial_csum,  ///< GSO from the TAP whose checksum we could not leave partial
};

/// A short, stable description of `e` for logs.
[[nodiscard]] constexpr const char* to_string(packet_error e) {
  switch (e) {
    case packet_error::truncated_ethernet:
      return "truncated ethernet header";
    case packet_error::not_ip:
      return "not an IP packet";
    case packet_error::bad_ipv4_header:
      return "malformed IPv4 header";
    case packet_error::bad_ipv6_header:
      return "malformed IPv6 header";
    case packet_error::ipv6_ext_chain_too_long:
      return "IPv6 extension header chain too long";
    case packet_error::fragment:
      return "IP fragment";
    case packet_error::not_tcp_or_udp:
      return "not TCP or UDP";
    case packet_error::bad_tcp_header:
      return "malformed TCP header";
    case packet_error::bad_udp_header:
      return "malformed UDP header";
    case packet_error::gso_not_tcp:
      return "GSO on a non-TCP packet";
    case packet_error::gso_ip_version_mismatch:
      return "GSO type does not match the IP version";
    case packet_error::bad_gso:
      return "bad GSO size or type";
    case packet_error::bad_csum_location:
      return "checksum location outside the frame";
    case packet_error::gso_without_partial_csum:
      return "GSO packet without partial checksum";
  }
  return "unknown packet error";
}

/// Network-layer protocol of a frame.
enum class l3_kind : std::uint8_t { ipv4, ipv6 };

/// IPPROTO_TCP / IPPROTO_UDP.
inline constexpr std::uint8_t ipproto_tcp = 6;
inline constexpr std::uint8_t ipproto_udp = 17;
/// Ethertypes we look at.
inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ethertype_ipv6 = 0x86DD;
inline constexpr std::uint16_t ethertype_vlan = 0x8100;  ///< 802.1Q
inline constexpr std::uint16_t ethertype_qinq = 0x88A8;  ///< 802.1ad (one tag only)
/// Extension headers walked at most (Linux skb_checksum_setup_ipv6 walks until L4).
inline constexpr int max_ipv6_ext_headers = 8;

/// Where the network and transport headers are.
struct l3_layout {
  l3_kind kind = l3_kind::ipv4;
  std::size_t l3_offset = 0;     ///< start of the IP header
  std::size_t l4_offset = 0;     ///< start of the transport header (after IPv6 extensions)
  std::size_t l4_end = 0;        ///< end of the IP payload (trailing padding excluded)
  std::uint8_t l4_protocol = 0;  ///< IPPROTO_* of the transport header
  bool fragment = false;         ///< MF set or non-zero fragment offset
};

/// Where the TCP/UDP header is and where its checksum field lives.
struct l4_layout {
  std::size_t offset = 0;       ///< start of the TCP/UDP header (== l3_layout::l4_offset)
  std::size_t header_len = 0;   ///< TCP: data offset * 4; UDP: 8
  std::size_t csum_offset = 0;  ///< checksum field, relative to `offset` (TCP 16, UDP 6)
  std::uint8_t protocol = 0;    ///< ipproto_tcp or ipproto_udp
  std::uint8_t tcp_flags = 0;   ///< TCP flags byte (CWR = 0x80); 0 for UDP
};

namespace detail {

[[nodiscard]] constexpr std::uint8_t u8_at(std::span<const std::byte> f, std::size_t off) {
  return static_cast<std::uint8_t>(f[off]);
}
[[nodiscard]] constexpr std::uint16_t be16_at(std::span<const std::byte> f, std::size_t off) {
  return static_cast<std::uint16_t>((u8_at(f, off) << 8) | u8_at(f, off + 1));
}

/// IPv4 header at `l3`; the frame may carry Ethernet padding after tot_len.
[[nodiscard]] constexpr result<l3_layout, packet_error> parse_ipv4(std::span<const std::byte> f,
                                                                   std::size_t l3) {
  if (f.size() < l3 + 20 || (u8_at(f, l3) >> 4) != 4) {
    return packet_error::bad_ipv4_header;
  }
  const std::size_t ihl = static_cast<std::size_t>(u8_at(f, l3) & 0x0F) * 4;
  const std::size_t tot_len = be16_at(f, l3 + 2);
  if (ihl < 20 || tot_len < ihl || f.size() - l3 < tot_len) {
    return packet_error::bad_ipv4_header;
  }
  l3_layout out;
  out.kind = l3_kind::ipv4;
  out.l3_offset = l3;
  out.l4_offset = l3 + ihl;
  out.l4_end = l3 + tot_len;
  out.l4_protocol = u8_at(f, l3 + 9);
  out.fragment = (be16_at(f, l3 + 6) & 0x3FFF) != 0;  // MF | fragment offset
  return out;
}

/// Walks IPv6 extension headers (hop-by-hop 0, routing 43, destination 60,
/// fragment 44, AH 51) from `out.l4_offset`, bounded in count and by l4_end.
[[nodiscard]] constexpr result<l3_layout, packet_error> walk_ipv6_ext(std::span<const std::byte> f,
                                                                      l3_layout out) {
  for (int i = 0; i <= max_ipv6_ext_headers; ++i) {
    const std::uint8_t nh = out.l4_protocol;
    if (nh != 0 && nh != 43 && nh != 60 && nh != 44 && nh != 51) {
      return out;
    }
    if (i == max_ipv6_ext_headers || out.l4_end - out.l4_offset < 8) {
      return packet_error::ipv6_ext_chain_too_long;
    }
    std::size_t len = 8;
    if (nh == 44) {
      out.fragment = out.fragment || (be16_at(f, out.l4_offset + 2) & 0xFFF9) != 0;
    } else if (nh == 51) {
      len = (static_cast<std::size_t>(u8_at(f, out.l4_offset + 1)) + 2) * 4;
    } else {
      len = (static_cast<std::size_t>(u8_at(f, out.l4_offset + 1)) + 1) * 8;
    }
    if (out.l4_end - out.l4_offset < len) {
      return packet_error::ipv6_ext_chain_too_long;
    }
    out.l4_protocol = u8_at(f, out.l4_offset);
    out.l4_offset += len;
  }
  return packet_error::ipv6_ext_chain_too_long;
}

/// IPv6 header at `l3`, then its extension headers.
[[nodiscard]] constexpr result<l3_layout, packet_error> parse_ipv6(std::span<const std::byte> f,
                                                                   std::size_t l3) {
  if (f.size() < l3 + 40 || (u8_at(f, l3) >> 4) != 6) {
    return packet_error::bad_ipv6_header;
  }
  const std::size_t payload = be16_at(f, l3 + 4);
  if (payload == 0 || f.size() - l3 - 40 < payload) {
    return packet_error::bad_ipv6_header;  // jumbogram or truncated
  }
  l3_layout out;
  out.kind = l3_kind::ipv6;
  out.l3_offset = l3;
  out.l4_offset = l3 + 40;
  out.l4_end = l3 + 40 + payload;
  out.l4_protocol = u8_at(f, l3 + 6);
  return walk_ipv6_ext(f, out);
}

}  // namespace detail

/// Parses Ethernet (+ one VLAN tag) and the IP header(s) of `frame`.
[[nodiscard]] constexpr result<l3_layout, packet_error> parse_l3(std::span<const std::byte> frame) {
  if (frame.size() < 14) {
    return packet_error::truncated_ethernet;
  }
  std::size_t l3 = 14;
  std::uint16_t ethertype = detail::be16_at(frame, 12);
  if (ethertype == ethertype_vlan || ethertype == ethertype_qinq) {
    if (frame.size() < 18) {
      return packet_error::truncated_ethernet;
    }
    ethertype = detail::be16_at(frame, 16);
    l3 = 18;
  }
  if (ethertype == ethertype_ipv4) {
    return detail::parse_ipv4(frame, l3);
  }
  if (ethertype == ethertype_ipv6) {
    return detail::parse_ipv6(frame, l3);
  }
  return packet_error::not_ip;
}

/// Parses the TCP or UDP header located by `l3`. Fragments and other
/// transports are refused.
[[nodiscard]] constexpr result<l4_layout, packet_error> parse_l4(std::span<const std::byte> frame,
                                                                 const l3_layout& l3) {
  if (l3.fragment) {
    return packet_error::fragment;
  }
  const std::size_t avail = l3.l4_end - l3.l4_offset;
  l4_layout out;
  out.offset = l3.l4_offset;
  out.protocol = l3.l4_protocol;
  if (l3.l4_protocol == ipproto_tcp) {
    if (avail < 20) {
      return packet_error::bad_tcp_header;
    }
    out.header_len = static_cast<std::size_t>(detail::u8_at(frame, out.offset + 12) >> 4) * 4;
    if (out.header_len < 20 || out.header_len > avail) {
      return packet_error::bad_tcp_header;
    }
    out.csum_offset = 16;
    out.tcp_flags = detail::u8_at(frame, out.offset + 13);
    return out;
  }
  if (l3.l4_protocol == ipproto_udp) {
    if (avail < 8) {
      return packet_error::bad_udp_header;
    }
    out.header_len = 8;
    out.csum_offset = 6;
    return out;
  }
  return packet_error::not_tcp_or_udp;
}

}  // namespace unetback::rings
