#pragma once
// Mapping between netif checksum/GSO flags and the struct virtio_net_hdr that
// prefixes every frame on a TAP opened with IFF_VNET_HDR (docs/protocol.md
// §3.6). Works on the private copy of a frame only.
//
// Guest TX -> TAP (guest_tx_to_vnet):
//   csum_blank      => VIRTIO_NET_HDR_F_NEEDS_CSUM, csum_start/csum_offset from
//                      our own parse of Ethernet / one VLAN / IPv4 / IPv6 (+ a
//                      bounded extension-header walk) / TCP / UDP;
//   data_validated  => VIRTIO_NET_HDR_F_DATA_VALID (when not partial);
//   GSO extra       => gso_type TCPV4/TCPV6 (+ECN when CWR is set), gso_size =
//                      MSS, hdr_len = L2+L3+L4, only after verifying the packet
//                      really is TCP over that IP version.
//   Checksum seed: Linux convention is that a csum_blank packet's L4 checksum
//   field holds the pseudo-header sum, which is what NEEDS_CSUM expects. We do
//   not trust the guest for it: the pseudo-header sum is recomputed from the
//   private copy and written into the field (identical for a correct guest).
//   A GSO packet without csum_blank is repaired as Linux does
//   (rx_gso_checksum_fixup): it becomes partial, seed written, and counted.
//   Anything malformed is a packet_error: the packet is dropped with
//   NETIF_RSP_ERROR and the kernel never sees a header it must reject.
// TAP -> guest RX (vnet_to_guest_rx):
//   NEEDS_CSUM => partial (NETRXF_csum_blank|NETRXF_data_validated) when the
//   frontend accepts blank checksums for that IP version, otherwise the
//   checksum is completed here and the packet is delivered validated;
//   DATA_VALID => validated; gso_type TCPV4/TCPV6 => a GSO extra.

#include <linux/if_tun.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "unetback/rings/checksum.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/rings/packet_headers.hpp"
#include "unetback/rings/result.hpp"

namespace unetback::rings {

/// struct virtio_net_hdr_mrg_rxbuf from linux/virtio_net.h, which C++ cannot
/// include (a field is named `class`). Native byte order, as a TAP without
/// TUNSETVNETLE/BE uses. A TAP with TUNSETVNETHDRSZ 10 uses the first 10
/// bytes (struct virtio_net_hdr); num_buffers is always 0 here.
struct vnet_header {
  std::uint8_t flags = 0;         ///< VIRTIO_NET_HDR_F_*
  std::uint8_t gso_type = 0;      ///< VIRTIO_NET_HDR_GSO_*
  std::uint16_t hdr_len = 0;      ///< L2+L3+L4 header bytes (GSO)
  std::uint16_t gso_size = 0;     ///< MSS (GSO)
  std::uint16_t csum_start = 0;   ///< where checksumming starts (NEEDS_CSUM)
  std::uint16_t csum_offset = 0;  ///< checksum field, relative to csum_start
  std::uint16_t num_buffers = 0;  ///< mergeable RX buffers (unused by TAP I/O here)
};
static_assert(sizeof(vnet_header) == 12 && offsetof(vnet_header, hdr_len) == 2 &&
              offsetof(vnet_header, gso_size) == 4 && offsetof(vnet_header, csum_start) == 6 &&
              offsetof(vnet_header, csum_offset) == 8 && offsetof(vnet_header, num_buffers) == 10);

/// linux/virtio_net.h constants.
inline constexpr std::uint8_t vnet_f_needs_csum = 1;  ///< VIRTIO_NET_HDR_F_NEEDS_CSUM
inline constexpr std::uint8_t vnet_f_data_valid = 2;  ///< VIRTIO_NET_HDR_F_DATA_VALID
inline constexpr std::uint8_t vnet_gso_none = 0;      ///< VIRTIO_NET_HDR_GSO_NONE
inline constexpr std::uint8_t vnet_gso_tcpv4 = 1;     ///< VIRTIO_NET_HDR_GSO_TCPV4
inline constexpr std::uint8_t vnet_gso_udp = 3;       ///< VIRTIO_NET_HDR_GSO_UDP
inline constexpr std::uint8_t vnet_gso_tcpv6 = 4;     ///< VIRTIO_NET_HDR_GSO_TCPV6
inline constexpr std::uint8_t vnet_gso_ecn = 0x80;    ///< VIRTIO_NET_HDR_GSO_ECN

/// The frontend's offload features (frontend keys, docs/protocol.md §1.7).
struct offload_features {
  bool sg = false;                 ///< feature-sg
  bool gso_tcpv4 = false;          ///< feature-gso-tcpv4
  bool gso_tcpv6 = false;          ///< feature-gso-tcpv6
  bool ipv6_csum_offload = false;  ///< feature-ipv6-csum-offload
  bool no_csum_offload = false;    ///< feature-no-csum-offload (IPv4)
};

/// TUNSETOFFLOAD flags for a vif whose frontend has `f` (docs/protocol.md §3.6):
/// TUN_F_CSUM if the frontend accepts blank checksums for IPv4 or IPv6 (the
/// other family is completed in vnet_to_guest_rx); TSO4/TSO6 only with SG, the
/// GSO feature and blank checksums for that family (Linux netdev feature
/// rules). Never UFO/USO/ECN, so the kernel segments those itself.
[[nodiscard]] constexpr unsigned tun_offload_flags(const offload_features& f) {
  const bool csum4 = !f.no_csum_offload;
  const bool csum6 = f.ipv6_csum_offload;
  if (!csum4 && !csum6) {
    return 0;
  }
  unsigned flags = TUN_F_CSUM;
  if (f.sg && f.gso_tcpv4 && csum4) {
    flags |= TUN_F_TSO4;
  }
  if (f.sg && f.gso_tcpv6 && csum6) {
    flags |= TUN_F_TSO6;
  }
  return flags;
}

/// The offload request of a guest TX packet (from tx_parser's tx_packet).
struct tx_offload {
  bool csum_blank = false;                 ///< NETTXF_csum_blank
  bool data_validated = false;             ///< NETTXF_data_validated
  std::uint8_t gso_type = gso_type::none;  ///< XEN_NETIF_GSO_TYPE_* (none: no GSO)
  std::uint16_t gso_size = 0;              ///< MSS
};

/// A vnet header for the TAP, and whether the packet needed Linux's GSO
/// checksum fix-up.
struct tx_vnet {
  vnet_header hdr{};
  bool checksum_repaired = false;
};

namespace detail {

/// Parses the L4 header and writes the pseudo-header seed into its checksum
/// field (the value NEEDS_CSUM expects there).
[[nodiscard]] inline result<l4_layout, packet_error> write_pseudo_seed(std::span<std::byte> frame,
                                                                       const l3_layout& l3) {
  const auto l4 = parse_l4(frame, l3);
  if (!l4) {
    return l4.error();
  }
  const l4_layout& t = l4.value();
  store_be16(frame, t.offset + t.csum_offset, pseudo_header_sum(frame, l3));
  return t;
}

/// The GSO fields of a vnet header.
struct gso_fields {
  std::uint8_t type = vnet_gso_none;
  std::uint16_t size = 0;
  std::uint16_t hdr_len = 0;
};

/// GSO fields for a packet verified to be TCP over the IP version of its type.
[[nodiscard]] inline result<gso_fields, packet_error> gso_for(const tx_offload& off,
                                                              const l3_layout& l3,
                                                              const l4_layout& l4) {
  if (l4.protocol != ipproto_tcp) {
    return packet_error::gso_not_tcp;
  }
  const bool v4 = off.gso_type == gso_type::tcpv4;
  if ((!v4 && off.gso_type != gso_type::tcpv6) || off.gso_size == 0) {
    return packet_error::bad_gso;
  }
  if ((l3.kind == l3_kind::ipv4) != v4) {
    return packet_error::gso_ip_version_mismatch;
  }
  gso_fields g;
  g.type = v4 ? vnet_gso_tcpv4 : vnet_gso_tcpv6;
  if ((l4.tcp_flags & 0x80) != 0) {  // CWR
    g.type = static_cast<std::uint8_t>(g.type | vnet_gso_ecn);
  }
  g.size = off.gso_size;
  g.hdr_len = static_cast<std::uint16_t>(l4.offset + l4.header_len);
  return g;
}

}  // namespace detail

/// Builds the vnet header for a guest TX frame held in private memory; may
/// rewrite the frame's L4 checksum field with the pseudo-header sum.
[[nodiscard]] inline result<tx_vnet, packet_error> guest_tx_to_vnet(std::span<std::byte> frame,
                                                                    const tx_offload& off) {
  tx_vnet out;
  vnet_header& h = out.hdr;
  const bool gso = off.gso_type != gso_type::none;
  if (!off.csum_blank && !gso) {
    h.flags = off.data_validated ? vnet_f_data_valid : 0;
    return out;
  }
  out.checksum_repaired = gso && !off.csum_blank;
  const auto l3 = parse_l3(frame);
  if (!l3) {
    return l3.error();
  }
  const auto l4 = detail::write_pseudo_seed(frame, l3.value());
  if (!l4) {
    return l4.error();
  }
  h.flags = vnet_f_needs_csum;
  h.csum_start = static_cast<std::uint16_t>(l4.value().offset);
  h.csum_offset = static_cast<std::uint16_t>(l4.value().csum_offset);
  if (gso) {
    const auto g = detail::gso_for(off, l3.value(), l4.value());
    if (!g) {
      return g.error();
    }
    h.gso_type = g.value().type;
    h.gso_size = g.value().size;
    h.hdr_len = g.value().hdr_len;
  }
  return out;
}

/// What the guest is told about a frame read from the TAP.
struct rx_offload {
  bool csum_partial = false;               ///< NETRXF_csum_blank | NETRXF_data_validated
  bool csum_validated = false;             ///< NETRXF_data_validated
  bool checksum_completed = false;         ///< we completed a partial checksum the guest can't take
  std::uint8_t gso_type = gso_type::none;  ///< XEN_NETIF_GSO_TYPE_* for a GSO extra
  std::uint16_t gso_size = 0;              ///< MSS
};

namespace detail {

/// Decides whether a NEEDS_CSUM frame may stay partial for this frontend, and
/// completes the checksum here otherwise.
[[nodiscard]] inline result<rx_offload, packet_error> rx_partial(const vnet_header& h,
                                                                 std::span<std::byte> frame,
                                                                 const offload_features& f) {
  const std::size_t start = h.csum_start;
  const std::size_t field = start + static_cast<std::size_t>(h.csum_offset);
  if (field + 2 > frame.size()) {
    return packet_error::bad_csum_location;
  }
  rx_offload out;
  out.csum_validated = true;
  const auto l3 = parse_l3(frame);
  const bool l4_ok = l3 && parse_l4(frame, l3.value()) && l3.value().l4_offset == start;
  const bool family_ok =
      l3 && (l3.value().kind == l3_kind::ipv4 ? !f.no_csum_offload : f.ipv6_csum_offload);
  if (l4_ok && family_ok) {
    out.csum_partial = true;
    return out;
  }
  const std::size_t end = (l3 && l3.value().l4_offset == start) ? l3.value().l4_end : frame.size();
  if (field + 2 > end) {
    return packet_error::bad_csum_location;
  }
  const bool udp = l3 && l3.value().l4_protocol == ipproto_udp;
  complete_checksum(frame, start, h.csum_offset, end, udp);
  out.checksum_completed = true;
  return out;
}

}  // namespace detail

/// Interprets the vnet header of a frame read from the TAP for delivery to a
/// frontend with features `f`; may complete the frame's checksum in place.
[[nodiscard]] inline result<rx_offload, packet_error> vnet_to_guest_rx(const vnet_header& h,
                                                                       std::span<std::byte> frame,
                                                                       const offload_features& f) {
  rx_offload out;
  if ((h.flags & vnet_f_needs_csum) != 0) {
    auto partial = detail::rx_partial(h, frame, f);
    if (!partial) {
      return partial.error();
    }
    out = partial.value();
  } else if ((h.flags & vnet_f_data_valid) != 0) {
    out.csum_validated = true;
  }
  const unsigned type = h.gso_type & ~static_cast<unsigned>(vnet_gso_ecn);
  if (type == vnet_gso_none) {
    return out;
  }
  if ((type != vnet_gso_tcpv4 && type != vnet_gso_tcpv6) || h.gso_size == 0) {
    return packet_error::bad_gso;
  }
  if (!out.csum_partial) {
    return packet_error::gso_without_partial_csum;
  }
  out.gso_type = type == vnet_gso_tcpv4 ? gso_type::tcpv4 : gso_type::tcpv6;
  out.gso_size = h.gso_size;
  return out;
}

}  // namespace unetback::rings
