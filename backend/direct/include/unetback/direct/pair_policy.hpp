#pragma once
// Which pairs of vifs may exchange frames over the direct path: only where no host
// policy could tell the difference (docs/direct-path.md). The control plane reads
// the facts about each vif's bridge port about once a second and judges every
// pair of vifs on the same bridge with this pure function; a pair that fails any
// rule goes (back) to the TAP path.

#include <cstdint>
#include <optional>
#include <string>

namespace unetback::direct {

/// What the host says about one vif's bridge port.
struct port_facts {
  std::uint32_t domid = 0;
  std::uint32_t devid = 0;
  bool direct_enabled = false;  ///< the vif's own setting (off by default)
  std::string bridge;           ///< its master bridge; empty: not on a bridge
  bool forwarding = false;      ///< brport/state is BR_STATE_FORWARDING
  bool isolated = false;        ///< brport/isolated
  /// Since the bridge last saw the guest's MAC on this port (1/100 s); empty
  /// when its FDB gives that MAC another port or none.
  std::optional<std::uint32_t> fdb_age_cs;
  bool packet_socket = false;  ///< an AF_PACKET socket is bound to it (or to every device)
  bool tc_or_xdp = false;      ///< a non-default qdisc, a tc filter or an XDP program on it
  bool netdev_rules = false;   ///< an nft chain of family netdev hooks it
  /// Its MTU now (`mtu`); not a pairing rule: the peers' routes use it
  /// (frame_route.hpp). Empty when it cannot be read.
  std::optional<std::uint32_t> mtu;
};

/// What the host says about the bridge both ports are on.
struct bridge_facts {
  bool vlan_filtering = false;       ///< bridge/vlan_filtering
  bool br_netfilter = false;         ///< br_netfilter hands bridged frames to ip/ip6/arptables
  bool bridge_rules = false;         ///< ebtables rules or an nft table of family bridge
  std::uint32_t ageing_time_cs = 0;  ///< bridge/ageing_time (1/100 s); 0: entries do not age
};

/// Why a pair must use the TAP path; `eligible` when it need not.
enum class pair_reason : std::uint8_t {
  eligible,
  same_vif,             ///< a vif is never its own peer
  direct_off,           ///< the setting is off on the vif
  not_bridged,          ///< the vif is on no bridge
  different_bridges,    ///< the two vifs are on different bridges
  port_not_forwarding,  ///< the port is blocking, learning, listening or disabled
  port_isolated,        ///< the bridge must not forward between isolated ports
  fdb_disagrees,        ///< the bridge would send the guest's MAC elsewhere
  packet_socket_open,   ///< someone (tcpdump) watches the vif
  tc_or_xdp_attached,   ///< a qdisc, tc filter or XDP program would see the frames
  netdev_rules,         ///< nft netdev rules on the vif
  vlan_filtering,       ///< the bridge filters by VLAN
  br_netfilter,         ///< iptables would see bridged frames
  bridge_rules,         ///< ebtables or nft bridge rules
};

/// A short, stable description of `r` for logs.
[[nodiscard]] const char* to_string(pair_reason r);

/// The verdict on one pair, and which vif's fact decided it.
struct pair_verdict {
  pair_reason why = pair_reason::eligible;
  bool on_second = false;  ///< the reason is the second vif's (port rules only)

  [[nodiscard]] bool eligible() const { return why == pair_reason::eligible; }
};

/// Judges the pair (a, b): symmetric, since frames flow both ways.
[[nodiscard]] pair_verdict judge_pair(const port_facts& a, const port_facts& b,
                                      const bridge_facts& bridge);

}  // namespace unetback::direct
