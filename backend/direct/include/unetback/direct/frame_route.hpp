#pragma once
// Which of a guest's TX frames may go straight to another guest's vif on the same
// bridge (the direct path, docs/direct-path.md) and which must go through the TAP
// to the host, where the bridge, netfilter and every other host policy see it.
// A pure function of the frame (already copied out of the guest's grants and
// validated) and of the peers the control plane found eligible: no I/O, no
// allocation, so a worker may call it per packet.

#include <cstddef>
#include <cstdint>
#include <span>

#include "unetback/rings/vnet_hdr.hpp"
#include "unetback/tap/mac.hpp"

namespace unetback::direct {

/// A vif the control plane paired with the source vif (pair_policy.hpp): its
/// guest's MAC, its netdev's MTU and the offloads its frontend accepts on RX.
struct direct_peer {
  tap::mac_address mac{};
  std::uint32_t mtu = 1500;
  rings::offload_features rx;
  std::uint16_t pair = 0;  ///< the control plane's index of the (source, peer) pair
};

/// One validated guest TX frame: the backend's private copy of it, whole, and
/// its offload request.
struct tx_frame {
  std::span<const std::byte> bytes;
  rings::tx_offload offload;
};

/// Why a frame goes to the host; `direct` when it does not.
enum class route_reason : std::uint8_t {
  direct,             ///< unicast to a peer that accepts it as it is
  no_peer_on_bridge,  ///< the source vif has no eligible pair
  truncated,          ///< shorter than an Ethernet header
  group_destination,  ///< broadcast or multicast: the host decides who gets it
  spoofed_source,     ///< source MAC is not the guest's own `mac`
  vlan_tagged,        ///< 802.1Q/802.1ad: the bridge's VLAN rules apply
  not_a_peer,         ///< the destination is no eligible peer's MAC
  exceeds_peer_mtu,   ///< bigger than the peer's MTU (a GSO segment, for GSO)
  offload_refused,    ///< the peer's frontend did not negotiate this GSO/checksum/SG
};

/// route_reason's values, for an array indexed by them.
inline constexpr std::size_t route_reason_count =
    static_cast<std::size_t>(route_reason::offload_refused) + 1;

/// A short, stable description of `r` for logs.
[[nodiscard]] const char* to_string(route_reason r);
/// `r` as a metric label or JSON key: "no_peer", "group", "mtu", ...
[[nodiscard]] const char* label_of(route_reason r);

/// Where one frame goes: `peer` indexes the span given to route_tx_frame.
struct frame_route {
  route_reason why = route_reason::no_peer_on_bridge;
  std::uint16_t peer = 0;

  [[nodiscard]] bool direct() const { return why == route_reason::direct; }
};

/// Decides the route of `f`, sent by the guest whose MAC is `source_mac`, given
/// the source vif's eligible peers (a handful: a linear scan).
[[nodiscard]] frame_route route_tx_frame(const tx_frame& f, const tap::mac_address& source_mac,
                                         std::span<const direct_peer> peers);

}  // namespace unetback::direct
