#pragma once
// What one queue's direct_port may use (docs/direct-path.md, "The wiring"): the
// guest's MAC, a lane out to each paired vif, and the rings in from them. The
// control plane builds a table, publishes it to the port and never changes it
// after; a new pairing is a new table. The rings and the doorbells a table names
// belong to the control plane and must outlive every port that can still see
// the table (direct_port::publish says when none can).

#include <vector>

#include "unetback/direct/doorbell.hpp"
#include "unetback/direct/frame_route.hpp"
#include "unetback/direct/handoff_ring.hpp"
#include "unetback/tap/mac.hpp"

namespace unetback::direct {

/// The way out of this queue to one paired vif: the ring to the queue of it
/// that takes this queue's frames, and that queue's doorbell.
struct outbound_lane {
  handoff_ring* ring = nullptr;
  doorbell* bell = nullptr;
};

struct lane_table {
  tap::mac_address source_mac{};       ///< the guest's `mac`: other sources go to the host
  std::vector<direct_peer> peers;      ///< for route_tx_frame
  std::vector<outbound_lane> lanes;    ///< lanes[i] reaches peers[i]
  std::vector<handoff_ring*> inbound;  ///< rings whose consumer is this queue
};

}  // namespace unetback::direct
