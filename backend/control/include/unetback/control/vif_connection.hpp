#pragma once
// A vif's data path over its life as one variant: stopped, running or
// destroyed. Each state holds only what is true of it: the counters of the
// last connection and the "resume the rings next time" mark exist only
// while stopped, the queues only while running, and nothing starts again
// once destroyed. What holds a stopped vif back (a fault, the operator) is
// kept beside it, since both can be true at once and outlive a connection.

#include <cstdint>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "unetback/control/queue_factory.hpp"
#include "unetback/control/vif_status.hpp"

namespace unetback::control {

/// No data path. What the last connection counted, shown until the next.
struct connection_stopped {
  std::vector<queue_status> last_queues;     ///< at the last disconnect
  std::optional<direct_status> last_direct;  ///< the direct counters, at the last stop
  bool resume_next = false;  ///< adopt()/enable(): the next connect resumes the rings
};

/// The workers of one connection.
struct connection_running {
  std::uint64_t generation = 0;  ///< reports of other connections are stale
  std::unique_ptr<vif_queues> queues;
  std::optional<bool> multicast_control;  ///< as last passed to the queues
};

/// The device is gone for good: the supervisor forgets the vif.
struct connection_destroyed {};

using vif_connection = std::variant<connection_stopped, connection_running, connection_destroyed>;

/// A fault that stopped the vif, and whether its frontend has since
/// re-initialised (asking for a fresh attempt once the backoff allows it).
struct failure_hold {
  vif_failure what;
  bool reinit_requested = false;
};

}  // namespace unetback::control
