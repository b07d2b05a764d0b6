#pragma once
// The control plane's side of the direct path (docs/direct-path.md, "The
// wiring"): the vifs whose queues run direct_ports, which of them are paired,
// a handoff_ring from each queue of a vif to one queue of each peer, and the
// lane table every port uses. All of it is built here, on the control thread,
// and only here: the workers read the published tables and nothing else.
//
// A change is published in two steps, so that no frame waits in a ring its
// consumer does not know about and no port keeps a lane to a ring being
// freed: first every port gets its old lanes that stay and both its old and
// its new inbound rings; then every port gets its new table. Rings no table
// names any more are freed after that (direct_port::publish waits for the
// calls that could still use them), with any frames left in them.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "unetback/direct/direct_port.hpp"
#include "unetback/direct/frame_route.hpp"
#include "unetback/direct/handoff_ring.hpp"
#include "unetback/direct/lane_table.hpp"

namespace unetback::direct {

/// The control plane's name for a vif: (domid << 16) | devid.
using vif_key = std::uint32_t;

/// A vif whose data path runs direct ports.
struct paired_vif {
  direct_peer guest;                 ///< its guest as a peer sees it (pair is set here)
  std::vector<direct_port*> queues;  ///< one per queue, owned by its data path
};

class pairing {
 public:
  /// Rings of `ring_bytes`, taking frames of up to `max_record` bytes (vnet
  /// header included). Throws std::invalid_argument as handoff_ring does.
  pairing(std::size_t ring_bytes, std::size_t max_record);
  /// Unpublishes every table.
  ~pairing();
  pairing(const pairing&) = delete;
  pairing& operator=(const pairing&) = delete;

  /// A vif whose data path just started; paired with nobody yet. Throws
  /// std::invalid_argument for a key already here or a vif without queues.
  void add(vif_key key, paired_vif vif);
  /// Before the vif's data path stops: once this returns no port, its own or
  /// a peer's, uses a lane or ring of it. Does nothing for an unknown key.
  void remove(vif_key key);
  /// Makes `pairs` (unordered; keys not added are ignored) the paired vifs.
  void set_pairs(std::span<const std::pair<vif_key, vif_key>> pairs);
  /// The vif's MTU changed (its TAP's, which the bridge enforces): its peers
  /// route by the new one from the next publish on. Unknown keys are ignored.
  void set_mtu(vif_key key, std::uint32_t mtu);

  [[nodiscard]] bool paired(vif_key a, vif_key b) const;
  [[nodiscard]] std::size_t ring_count() const { return rings_.size(); }
  /// The vifs added, in key order.
  [[nodiscard]] std::vector<vif_key> vifs() const;

 private:
  /// The ring from queue `q` of one vif to the peer vif.
  using ring_id = std::tuple<vif_key, unsigned, vif_key>;
  using port_id = std::pair<vif_key, unsigned>;
  using table_map = std::map<port_id, std::unique_ptr<lane_table>>;

  [[nodiscard]] std::vector<vif_key> peers_of(vif_key key) const;
  [[nodiscard]] std::set<ring_id> wanted_rings() const;
  [[nodiscard]] lane_table table_for(vif_key key, unsigned q);
  [[nodiscard]] handoff_ring* ring(const ring_id& id);
  void republish();
  void publish_all(table_map next);

  std::size_t ring_bytes_;
  std::size_t max_record_;
  std::map<vif_key, paired_vif> vifs_;
  std::set<std::pair<vif_key, vif_key>> pairs_;  ///< (lower key, higher key)
  std::map<ring_id, std::unique_ptr<handoff_ring>> rings_;
  table_map tables_;  ///< what each port uses now
};

}  // namespace unetback::direct
