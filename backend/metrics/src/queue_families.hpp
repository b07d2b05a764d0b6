#pragma once
// The per-queue metric families, derived from the one list of per-queue
// counters (UNETBACK_QUEUE_COUNTERS), so that every counter the daemon keeps
// is exported and none is made up: tx_drops_<reason> and rx_drops_<reason>
// become one family each with a `reason` label, poll_us becomes seconds (a
// base unit), every other counter becomes unetback_queue_<name>_total.

#include <string>
#include <string_view>
#include <vector>

#include "unetback/datapath/queue_counters.hpp"

namespace unetback::metrics {

/// Where a counter is in a queue's counters.
using counter_field = std::uint64_t datapath::queue_counters_snapshot::*;

/// One counter of the daemon, as a sample of a family.
struct counter_source {
  std::string_view counter;  ///< the name in queue_counters / `unetbackctl stats`
  counter_field field;
  std::string reason;  ///< value of the `reason` label; empty: no such label
};

struct queue_family {
  std::string name;
  std::string help;
  std::vector<counter_source> sources;
  double scale = 1;  ///< value = counter * scale (1: written as an integer)
};

/// Every per-queue family, in the counters' order.
[[nodiscard]] const std::vector<queue_family>& queue_families();

}  // namespace unetback::metrics
