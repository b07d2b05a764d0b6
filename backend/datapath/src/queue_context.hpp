#pragma once
// What a queue worker's TX and RX paths share: configuration, counters, the
// vif's shared state and the worker's own handles. All references outlive the
// worker thread (owned by queue::impl).

#include <ctime>

#include <chrono>
#include <cstdint>

#include "queue_state.hpp"
#include "unetback/datapath/queue_config.hpp"
#include "unetback/datapath/queue_counters.hpp"
#include "unetback/datapath/vif_shared_state.hpp"
#include "unetback/platform/frame_port.hpp"
#include "unetback/platform/grant_table.hpp"
#include "unetback/rings/vnet_hdr.hpp"

namespace unetback::datapath {

using clock = std::chrono::steady_clock;

/// steady_clock's time (CLOCK_MONOTONIC: libstdc++'s steady_clock) to within
/// a scheduler tick, without a system call. On a PV dom0 the precise clock
/// often is one (the vDSO cannot use the TSC there: docs/performance.md, "Cost
/// account"); the coarse one is read from the vDSO page. Good for timers of
/// milliseconds (event backoff, rate credit, stall); not for busy-poll windows.
[[nodiscard]] inline clock::time_point coarse_now() {
  timespec ts{};
  (void)::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return clock::time_point(std::chrono::duration_cast<clock::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

/// The worker's view of its queue.
struct queue_context {
  const queue_config& config;
  queue_counters& counters;
  vif_shared_state& shared;
  platform::grant_table& grants;
  platform::frame_port& tap;
  tx_journal& tx_responses;  ///< where TX responses are staged before the ring
  rx_journal& rx_responses;
};

/// The frontend's offload features in the form rings/ expects.
[[nodiscard]] inline rings::offload_features offload_features_of(const frontend_features& f) {
  return rings::offload_features{f.sg, f.gso_tcpv4, f.gso_tcpv6, f.ipv6_csum_offload,
                                 f.no_csum_offload};
}

/// A grant-copy segment with one foreign side (`domid` granted `ref`).
[[nodiscard]] inline platform::grant_copy_segment foreign_segment(domid granter, grant_ref ref,
                                                                  std::uint16_t offset) {
  platform::grant_copy_segment s{};
  s.source.foreign.ref = ref.value();
  s.source.foreign.offset = offset;
  s.source.foreign.domid = granter.value();
  return s;
}

}  // namespace unetback::datapath
