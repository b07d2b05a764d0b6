#include "unetback/direct/frame_route.hpp"

#include <algorithm>
#include <array>

#include "unetback/rings/packet_headers.hpp"
#include "unetback/rings/rx_builder.hpp"

namespace unetback::direct {

namespace {

constexpr std::size_t ethernet_header_bytes = 14;

[[nodiscard]] tap::mac_address mac_at(std::span<const std::byte> f, std::size_t off) {
  tap::mac_address m{};
  std::transform(f.begin() + static_cast<std::ptrdiff_t>(off),
                 f.begin() + static_cast<std::ptrdiff_t>(off + m.size()), m.begin(),
                 [](std::byte b) { return static_cast<std::uint8_t>(b); });
  return m;
}

[[nodiscard]] bool tagged(std::span<const std::byte> f) {
  const auto type = rings::detail::be16_at(f, 12);
  return type == rings::ethertype_vlan || type == rings::ethertype_qinq;
}

/// A blank checksum or GSO needs the peer to accept a partial checksum of the
/// frame's IP family (feature-no-csum-offload, feature-ipv6-csum-offload).
[[nodiscard]] bool checksum_accepted(const rings::l3_layout& l3,
                                     const rings::offload_features& rx) {
  return l3.kind == rings::l3_kind::ipv4 ? !rx.no_csum_offload : rx.ipv6_csum_offload;
}

/// One GSO segment on the peer's wire: IP and TCP headers plus gso_size; 0 if
/// the headers do not parse.
[[nodiscard]] std::size_t gso_segment_bytes(const tx_frame& f, const rings::l3_layout& l3) {
  const auto l4 = rings::parse_l4(f.bytes, l3);
  if (!l4) {
    return 0;
  }
  return l4.value().offset + l4.value().header_len - ethernet_header_bytes + f.offload.gso_size;
}

/// Whether `peer` can take `f` as it is: ring slots, GSO type, checksum, MTU.
/// A plain frame is judged by its length alone; only an offload needs its headers.
[[nodiscard]] route_reason fits_peer(const tx_frame& f, const direct_peer& peer) {
  rings::rx_packet_desc desc;
  desc.length = static_cast<std::uint32_t>(f.bytes.size());
  desc.offload.gso_type = f.offload.gso_type;
  const auto slots = rings::rx_slots_needed(desc, peer.rx);
  if (!slots) {
    return slots.error() == rings::rx_error::too_big ? route_reason::exceeds_peer_mtu
                                                     : route_reason::offload_refused;
  }
  const bool gso = f.offload.gso_type != rings::gso_type::none;
  if (!gso && !f.offload.csum_blank) {
    return f.bytes.size() - ethernet_header_bytes > peer.mtu ? route_reason::exceeds_peer_mtu
                                                             : route_reason::direct;
  }
  const auto l3 = rings::parse_l3(f.bytes);
  if (!l3 || !checksum_accepted(l3.value(), peer.rx)) {
    return route_reason::offload_refused;  // offloads need IP (the TX parser already said so)
  }
  const std::size_t wire =
      gso ? gso_segment_bytes(f, l3.value()) : f.bytes.size() - ethernet_header_bytes;
  if (wire == 0) {
    return route_reason::offload_refused;
  }
  return wire > peer.mtu ? route_reason::exceeds_peer_mtu : route_reason::direct;
}

}  // namespace

namespace {

/// Each reason's metric label and log text, in the enum's order.
struct reason_names {
  const char* label;
  const char* text;
};
constexpr std::array<reason_names, route_reason_count> names_of_reason{{
    {"direct", "direct"},
    {"no_peer", "no eligible peer on the bridge"},
    {"truncated", "shorter than an Ethernet header"},
    {"group", "broadcast or multicast destination"},
    {"spoofed_source", "source MAC is not the guest's"},
    {"vlan", "VLAN tagged"},
    {"not_a_peer", "destination is not a paired vif"},
    {"mtu", "bigger than the peer's MTU"},
    {"offload", "offload the peer did not negotiate"},
}};

[[nodiscard]] const reason_names* names(route_reason r) {
  const auto i = static_cast<std::size_t>(r);
  return i < names_of_reason.size() ? &names_of_reason[i] : nullptr;
}

}  // namespace

const char* to_string(route_reason r) {
  const auto* n = names(r);
  return n != nullptr ? n->text : "unknown route reason";
}

const char* label_of(route_reason r) {
  const auto* n = names(r);
  return n != nullptr ? n->label : "unknown";
}

frame_route route_tx_frame(const tx_frame& f, const tap::mac_address& source_mac,
                           std::span<const direct_peer> peers) {
  if (peers.empty()) {
    return {route_reason::no_peer_on_bridge, 0};
  }
  if (f.bytes.size() < ethernet_header_bytes) {
    return {route_reason::truncated, 0};
  }
  if ((static_cast<std::uint8_t>(f.bytes[0]) & 1U) != 0) {
    return {route_reason::group_destination, 0};
  }
  if (mac_at(f.bytes, 6) != source_mac) {
    return {route_reason::spoofed_source, 0};
  }
  if (tagged(f.bytes)) {
    return {route_reason::vlan_tagged, 0};
  }
  const auto destination = mac_at(f.bytes, 0);
  const auto it = std::find_if(peers.begin(), peers.end(),
                               [&](const direct_peer& p) { return p.mac == destination; });
  if (it == peers.end()) {
    return {route_reason::not_a_peer, 0};
  }
  const auto index = static_cast<std::uint16_t>(it - peers.begin());
  return {fits_peer(f, *it), index};
}

}  // namespace unetback::direct
