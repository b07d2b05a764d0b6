#include "unetback/direct/pair_policy.hpp"

namespace unetback::direct {

namespace {

/// The first rule one port breaks, in the order an operator would check them.
[[nodiscard]] pair_reason judge_port(const port_facts& p) {
  if (!p.direct_enabled) {
    return pair_reason::direct_off;
  }
  if (p.bridge.empty()) {
    return pair_reason::not_bridged;
  }
  if (!p.forwarding) {
    return pair_reason::port_not_forwarding;
  }
  if (p.isolated) {
    return pair_reason::port_isolated;
  }
  if (!p.fdb_age_cs) {
    return pair_reason::fdb_disagrees;
  }
  if (p.packet_socket) {
    return pair_reason::packet_socket_open;
  }
  if (p.tc_or_xdp) {
    return pair_reason::tc_or_xdp_attached;
  }
  if (p.netdev_rules) {
    return pair_reason::netdev_rules;
  }
  return pair_reason::eligible;
}

[[nodiscard]] pair_reason judge_bridge(const bridge_facts& b) {
  if (b.vlan_filtering) {
    return pair_reason::vlan_filtering;
  }
  if (b.br_netfilter) {
    return pair_reason::br_netfilter;
  }
  if (b.bridge_rules) {
    return pair_reason::bridge_rules;
  }
  return pair_reason::eligible;
}

}  // namespace

const char* to_string(pair_reason r) {
  switch (r) {
    case pair_reason::eligible:
      return "eligible";
    case pair_reason::same_vif:
      return "same vif";
    case pair_reason::direct_off:
      return "direct path off";
    case pair_reason::not_bridged:
      return "not on a bridge";
    case pair_reason::different_bridges:
      return "on different bridges";
    case pair_reason::port_not_forwarding:
      return "bridge port not forwarding";
    case pair_reason::port_isolated:
      return "bridge port isolated";
    case pair_reason::fdb_disagrees:
      return "bridge FDB gives another port for the guest's MAC";
    case pair_reason::packet_socket_open:
      return "packet socket open";
    case pair_reason::tc_or_xdp_attached:
      return "tc or XDP attached";
    case pair_reason::netdev_rules:
      return "nft netdev rules";
    case pair_reason::vlan_filtering:
      return "bridge VLAN filtering";
    case pair_reason::br_netfilter:
      return "br_netfilter active";
    case pair_reason::bridge_rules:
      return "ebtables or nft bridge rules";
  }
  return "unknown pair reason";
}

pair_verdict judge_pair(const port_facts& a, const port_facts& b, const bridge_facts& bridge) {
  if (a.domid == b.domid && a.devid == b.devid) {
    return {pair_reason::same_vif, false};
  }
  if (const auto r = judge_port(a); r != pair_reason::eligible) {
    return {r, false};
  }
  if (const auto r = judge_port(b); r != pair_reason::eligible) {
    return {r, true};
  }
  if (a.bridge != b.bridge) {
    return {pair_reason::different_bridges, false};
  }
  return {judge_bridge(bridge), false};
}

}  // namespace unetback::direct
