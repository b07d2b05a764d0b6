#pragma once
// The XenStore nodes libxl 4.17 writes for a vif (docs/protocol.md §1.3, §8.1):
// backend keys, frontend keys, and libxl's private copy, with their permissions.

#include <string>
#include <utility>
#include <vector>

#include "unetback/rings/ids.hpp"
#include "unetback/xs/permission.hpp"

namespace unetback::toolstack {

/// What a `vif=` spec says (the keys that reach the backend).
struct vif_spec {
  domid guest;
  domid backend{0};
  unsigned devid = 0;
  std::string mac;  ///< guest MAC, xx:xx:xx:xx:xx:xx
  std::string bridge = "xenbr0";
  std::string script;   ///< absolute path of the hotplug script
  std::string ip;       ///< optional
  std::string rate;     ///< optional "bytes,usecs"
  std::string vifname;  ///< optional
  unsigned mtu = 1500;
};

/// One node to write: path, value, permissions.
struct node {
  std::string path;
  std::string value;
  std::vector<xs::permission> perms;
};

[[nodiscard]] std::string backend_path(const vif_spec& spec);
[[nodiscard]] std::string frontend_path(const vif_spec& spec);
[[nodiscard]] std::string libxl_path(const vif_spec& spec);

/// Every node `xl network-attach` creates, directories first, in libxl's order.
[[nodiscard]] std::vector<node> vif_nodes(const vif_spec& spec);

/// Parses "key=value,key=value" (an xl vifspec) into `spec`; throws
/// std::invalid_argument naming the bad key.
void apply_vifspec(vif_spec& spec, const std::string& text);

}  // namespace unetback::toolstack
