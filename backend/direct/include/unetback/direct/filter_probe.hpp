#pragma once
// What rtnetlink and nfnetlink say about the host's packet filters, the facts of
// pair_policy that sysfs does not show (docs/direct-path.md): qdiscs and XDP
// programs per device, nft chains of family netdev and their devices, nft
// tables of family bridge. One snapshot per probe cycle of the control plane.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace unetback::direct {

/// Bounds on the dumps: a host with more than this is judged filtered.
struct filter_probe_limits {
  std::size_t messages = 65536;  ///< netlink messages read per dump at most
};

/// One snapshot. Default-constructed it knows nothing, and then every device
/// counts as filtered: the direct path fails closed.
struct filter_facts {
  bool known = false;                      ///< every dump answered within its bounds
  std::vector<unsigned> filtered_devices;  ///< ifindexes with tc (see below) or XDP
  std::vector<std::string> netdev_hooked;  ///< devices an nft netdev chain hooks
  bool netdev_unnamed = false;             ///< a netdev chain whose devices were unreadable
  bool bridge_tables = false;              ///< an nft bridge table, or legacy ebtables loaded

  /// A qdisc other than the defaults (mq, pfifo_fast, fq_codel, noqueue, the
  /// default_qdisc sysctl's), an ingress/clsact qdisc, or an XDP program.
  [[nodiscard]] bool tc_or_xdp(unsigned ifindex) const;
  [[nodiscard]] bool netdev_rules(std::string_view ifname) const;
  [[nodiscard]] bool bridge_rules() const { return !known || bridge_tables; }
};

/// Reads a snapshot in the calling thread's network namespace. Any dump that
/// fails or exceeds its bound leaves `known` false.
[[nodiscard]] filter_facts read_filter_facts(const filter_probe_limits& limits = {});

}  // namespace unetback::direct
