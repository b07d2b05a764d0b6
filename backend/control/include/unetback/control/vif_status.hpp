#pragma once
// The daemon's status as values. The control plane reports what it knows in
// these types; the control socket's replies (backend/ctl, status_json.hpp)
// and the metrics (backend/metrics) render them, each in its own format.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "unetback/control/vif_id.hpp"
#include "unetback/control/xenbus_state.hpp"
#include "unetback/datapath/control_ring.hpp"
#include "unetback/datapath/fault.hpp"
#include "unetback/datapath/queue_counters.hpp"
#include "unetback/datapath/vif_datapath.hpp"
#include "unetback/direct/direct_counters.hpp"
#include "unetback/rings/ctrl_ring.hpp"
#include "unetback/rings/ids.hpp"

namespace unetback::control {

/// One queue of a vif: its counters and its rings' indices.
using datapath::queue_status;

/// What stopped a vif, until its frontend re-initialises or the operator
/// enables it.
struct vif_failure {
  datapath::fault_kind kind = datapath::fault_kind::frontend;
  std::string message;
};

/// The direct path of a vif that offers it (docs/direct-path.md): its frames
/// that bypassed the TAP, which the TAP's own statistics cannot count.
struct direct_status {
  std::vector<vif_id> peers;                  ///< the vifs it is paired with now
  std::vector<direct::direct_counts> queues;  ///< per queue, in index order
};

struct vif_status {
  vif_id id;
  xenbus_state state = xenbus_state::unknown;  ///< the backend's
  std::string tap;                             ///< its name; "" without one
  std::optional<vif_failure> failure;
  std::optional<std::string> disabled_by;  ///< unetbackctl disable's reason
  /// The running queues, or what they counted when the vif last disconnected.
  std::vector<queue_status> queues;
  std::optional<datapath::ctrl_ring_counters> ctrl;  ///< with a control ring
  /// With the direct path offered; after a disconnect, what it last counted.
  std::optional<direct_status> direct;

  /// "vif<D>.<N>".
  [[nodiscard]] std::string name() const { return id.name(); }
  [[nodiscard]] bool disabled() const { return failure.has_value() || disabled_by.has_value(); }
  /// The operator's reason, "<kind> fault: <message>", or "" when enabled.
  [[nodiscard]] std::string disabled_reason() const;
};

/// The guest's receive-hash configuration (control ring), as the data path
/// holds it.
struct hash_status {
  rings::hash_config config;
  std::uint64_t generation = 0;  ///< 0: the guest configured nothing yet
  std::uint32_t num_queues = 0;
  /// The TAP runs the steering program, so the mapping picks each frame's RX
  /// queue; false: the daemon could not load it, only the HASH extras follow.
  bool steered = false;
  /// Configurations saved and steered to (paced: at most ten per second).
  std::uint64_t applied = 0;
};

struct daemon_status {
  domid self;
  std::uint64_t adopted = 0;  ///< devices taken over at start-up
  std::vector<vif_status> vifs;
};

}  // namespace unetback::control
