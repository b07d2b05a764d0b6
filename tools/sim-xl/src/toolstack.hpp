#pragma once
// The toolstack's side of a vif, as libxl 4.17 does it (docs/protocol.md §1.3,
// §1.10, §8): one transaction to create the nodes, a 10 s wait for InitWait,
// the hotplug script, and the unplug handshake with its 10 s wait for Closed.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "unetback/xs/client.hpp"
#include "vif_nodes.hpp"

namespace unetback::toolstack {

/// libxl's LIBXL_INIT_TIMEOUT and LIBXL_DESTROY_TIMEOUT.
inline constexpr std::chrono::seconds init_timeout{10};
inline constexpr std::chrono::seconds destroy_timeout{10};

/// How network_detach goes: `xl network-detach`, or as `xl destroy` does it.
enum class detach : std::uint8_t { graceful, force };

class toolstack {
 public:
  explicit toolstack(xs::client& client) : client_(client) {}

  /// Introduces domain `d` to xenstored and creates /local/domain/<d> with
  /// libxl's permissions (its device/ dir readable by the guest).
  void domain_create(domid d);
  /// Unplugs every vif of `d` the way `xl destroy` does (frontend removed in
  /// the first transaction), removes the domain's nodes and releases it.
  void domain_destroy(domid d);

  /// `xl network-attach`: writes the nodes in one transaction (fails if the
  /// device exists), waits for InitWait, runs the hotplug script `online`.
  /// Throws std::runtime_error with libxl-like messages on failure.
  void network_attach(const vif_spec& spec);
  /// `xl network-detach`: online=0 + state=5 in one transaction, waits for
  /// Closed, runs the script `offline`, removes the nodes. With
  /// detach::force (as `xl destroy`) the frontend dir goes in the first
  /// transaction.
  /// Returns false if the backend did not reach Closed in time (nodes are
  /// removed anyway, as libxl does).
  bool network_detach(const vif_spec& spec, detach how);
  /// `xl network-list`: one line per vif of `d`.
  std::vector<std::string> network_list(domid d);

  /// Polls `path` until it reads `value` or `timeout` passes.
  bool wait_value(const std::string& path, const std::string& value,
                  std::chrono::milliseconds timeout);

 private:
  xs::client& client_;
};

/// Rebuilds the vif_spec of an existing device from its backend nodes.
[[nodiscard]] vif_spec read_vif_spec(xs::client& client, domid guest, unsigned devid,
                                     domid backend);

}  // namespace unetback::toolstack
