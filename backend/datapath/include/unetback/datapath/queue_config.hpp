#pragma once
// What the control plane hands the data path for one netif queue: every value
// here was read from XenStore and validated by the control plane. The data path
// never reads XenStore (style.md practice 4).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "unetback/rings/ids.hpp"

namespace unetback::datapath {

/// Features the frontend requested (frontend dir keys, docs/protocol.md §1.7).
struct frontend_features {
  bool rx_notify = false;          ///< feature-rx-notify
  bool sg = false;                 ///< feature-sg: multi-slot RX packets
  bool gso_tcpv4 = false;          ///< feature-gso-tcpv4
  bool gso_tcpv6 = false;          ///< feature-gso-tcpv6
  bool ipv6_csum_offload = false;  ///< feature-ipv6-csum-offload
  bool no_csum_offload = false;    ///< feature-no-csum-offload
  bool multicast_control = false;  ///< request-multicast-control (sampled at connect)
};

/// Daemon/vif configuration for a queue. Defaults follow Linux netback.
struct queue_tuning {
  /// poll_us: a window of a few wake-ups of this host (wake_cost.hpp).
  static constexpr std::uint32_t poll_us_auto = 0xFFFFFFFF;
  /// Longest adaptive busy-poll after the last work before sleeping (0 =
  /// off): the window grows while wake-ups come sooner than this and shrinks
  /// when they come later (poll_window.hpp). Waking a sleeping worker costs a
  /// dom0 vCPU wake-up under Xen, and how much depends on the host by a factor
  /// of a hundred (hardware, nested, emulated): auto measures it.
  std::uint32_t poll_us = poll_us_auto;
  /// The most of every 10 ms a worker may spend busy-polling (percent);
  /// within it the spinning must pay for itself in wake-ups saved
  /// (spin_budget.hpp). 100: neither limit.
  std::uint32_t poll_budget_pct = 50;
  /// No busy-polling while dom0's steal time (the hypervisor running other
  /// vCPUs while ours wanted to run) exceeds this percent of its CPU time:
  /// a spinning worker would hold a CPU that a guest or dom0 waits for.
  /// 100 = spin regardless.
  std::uint32_t poll_max_steal_pct = 5;
  std::uint32_t tx_batch = 64;  ///< max TX requests handled per sweep
  std::uint32_t rx_batch = 64;  ///< max RX packets handled per sweep
  /// Kick the frontend after every sweep that produced responses, ignoring
  /// rsp_event (ring.h notification suppression off). A benchmark lever
  /// only: it shows what the suppression saves (docs/performance.md).
  bool notify_always = false;
  /// Private RX buffer of one sweep (frames read from the TAP before their
  /// batched grant copy). The TAP is read only while RX buffers are posted,
  /// so the kernel's bounded TAP queue is the real backlog (XSA-392).
  std::size_t rx_backlog_bytes = std::size_t{512} * 1024;
  /// No usable RX slots this long: count a stall, turn the vif's carrier off
  /// until the guest posts buffers again, drop what waits (Linux
  /// rx_stall_timeout_msecs).
  std::chrono::milliseconds rx_stall_timeout{60000};
  /// No usable RX slots this long: drop the frames that wait, held and in
  /// the TAP, and again every interval while it lasts, so that a guest that
  /// comes back gets no stale frames (Linux rx_drain_timeout_msecs).
  std::chrono::milliseconds rx_drain_timeout{10000};
  /// TX data slots per packet, the first included, as Linux netback counts
  /// them (it counts the slots after the first): up to 19 accepted
  /// (XEN_NETIF_NR_SLOTS_MIN after the first; old netfronts and GPLPV send 19
  /// for a TSO packet), more dropped, 22 or more a hostile frontend
  /// (fatal_skb_slots 20 after the first, reached while a 22nd is announced).
  std::uint32_t max_tx_slots_drop = 19;   ///< > this many data slots: drop
  std::uint32_t max_tx_slots_fatal = 22;  ///< >= this many: hostile frontend
  std::uint64_t rate_bytes = 0;           ///< `rate` key credit per interval (0 = unlimited)
  std::chrono::microseconds rate_interval{0};
};

/// One queue's connection: grant refs and ports from the frontend's
/// `queue-N/` (or flat) keys, already range-checked.
struct queue_config {
  std::string name;       ///< thread name, "vif<domid>.<devid>-q<N>" (<= 15 chars)
  domid frontend;         ///< the guest (frontend-id)
  queue_index index;      ///< this queue's number
  grant_ref tx_ring_ref;  ///< tx-ring-ref
  grant_ref rx_ring_ref;  ///< rx-ring-ref
  evtchn_port tx_port;    ///< event-channel-tx, or event-channel when not split
  evtchn_port rx_port;    ///< event-channel-rx, or event-channel when not split
  bool split_event_channels = false;
  /// The rings were served before (daemon restart, `unetbackctl enable`):
  /// attach resumes at req_cons = rsp_prod_pvt = the shared rsp_prod (ring.h
  /// BACK_RING_ATTACH), so requests a previous worker consumed but never
  /// answered are processed again (TX: sent again; RX: the posted buffers
  /// are reused), and start() kicks the frontend once, because a kick or a
  /// notification may have been lost while nobody was bound.
  bool resume = false;
  /// Where the queue's response journals and counters outlive the process
  /// (queue_state.hpp); empty: anonymous memory, nothing survives.
  std::string state_file;
  frontend_features features;
  queue_tuning tuning;
};

}  // namespace unetback::datapath
