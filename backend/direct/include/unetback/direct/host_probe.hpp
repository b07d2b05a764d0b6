#pragma once
// Reads what pair_policy needs to know about a vif's bridge port and its bridge
// from sysfs and procfs (docs/direct-path.md). The control plane calls it about
// once a second; nothing here is on the packet path.
// The packet filters (qdiscs, XDP, nft) come from netlink: filter_probe.hpp's
// snapshot, passed in; without one every filter counts as present.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "unetback/direct/filter_probe.hpp"
#include "unetback/direct/pair_policy.hpp"
#include "unetback/tap/mac.hpp"

namespace unetback::direct {

/// Where sysfs and procfs are mounted (tests point them at a fake tree).
struct host_roots {
  std::filesystem::path sys = "/sys";
  std::filesystem::path proc = "/proc";
};

/// Bounds on host files a busy host (or guests filling the bridge's FDB with
/// spoofed MACs) can make long; past them the answer is the safe one.
struct host_probe_limits {
  std::size_t fdb_entries = 65536;    ///< brforward entries read at most
  std::size_t packet_sockets = 4096;  ///< /proc/net/packet lines read at most
};

class host_probe {
 public:
  explicit host_probe(host_roots roots = {}, host_probe_limits limits = {});

  /// The facts about `ifname`'s bridge port, for the guest whose MAC is
  /// `guest_mac`. The caller fills domid, devid and direct_enabled.
  [[nodiscard]] port_facts port(std::string_view ifname, const tap::mac_address& guest_mac,
                                const filter_facts& filters = {}) const;

  /// The facts about the bridge `bridge`.
  [[nodiscard]] bridge_facts bridge(std::string_view bridge,
                                    const filter_facts& filters = {}) const;

 private:
  [[nodiscard]] std::filesystem::path net(std::string_view ifname) const;
  /// The age of the bridge's entry for `mac` (1/100 s) if that entry gives
  /// `port`; nullopt if it gives another port, is local or is not found.
  [[nodiscard]] std::optional<std::uint32_t> fdb_age_on_port(std::string_view bridge,
                                                             const tap::mac_address& mac,
                                                             unsigned port) const;
  [[nodiscard]] bool packet_socket_on(unsigned ifindex) const;
  [[nodiscard]] bool br_netfilter_on(std::string_view bridge) const;

  host_roots roots_;
  host_probe_limits limits_;
};

}  // namespace unetback::direct
