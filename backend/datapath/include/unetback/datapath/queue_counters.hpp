#pragma once
// Per-queue counters, named by failure mode (style.md practice 15). Each
// field is a relaxed std::atomic<uint64_t> written only by the queue's
// worker thread and read by anyone (unetbackctl, teardown log lines).
// queue_counters_snapshot is the plain copy; both are generated from one
// list so a counter cannot exist in one and not the other.

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "unetback/util/worker_counter.hpp"

// X(name, description): the single list of per-queue counters.
#define UNETBACK_QUEUE_COUNTERS(X)                                                                \
  X(tx_requests, "TX ring slots consumed (data and extra-info)")                                  \
  X(tx_packets, "guest packets written to the TAP")                                               \
  X(tx_bytes, "bytes of those packets")                                                           \
  X(tx_errors, "TX packets answered NETIF_RSP_ERROR (sum of the tx_drops_* below)")               \
  X(tx_drops_runt, "TX packet smaller than an Ethernet header")                                   \
  X(tx_drops_slot_size, "TX slot larger than what remained of the packet size")                   \
  X(tx_drops_too_many_slots, "TX packet with more data slots than max_tx_slots_drop")             \
  X(tx_drops_duplicate_extra, "TX packet with two extras of one type")                            \
  X(tx_drops_gso_not_negotiated, "TX GSO type not advertised")                                    \
  X(tx_drops_bad_headers, "TX offload request on headers we could not parse")                     \
  X(tx_drops_grant_copy, "TX packet whose grant copy failed (bad or revoked grant)")              \
  X(tx_drops_tap_full, "TX packet dropped because the TAP queue was full (answered OKAY)")        \
  X(tx_drops_tap_error, "TX packet the TAP refused, e.g. interface down (answered OKAY)")         \
  X(tx_gso_checksum_fixups, "TX GSO packet without csum_blank, repaired (Linux fixup)")           \
  X(tx_mcast_add, "multicast filter additions")                                                   \
  X(tx_mcast_del, "multicast filter removals")                                                    \
  X(tx_mcast_list_full, "multicast additions refused: list full (64)")                            \
  X(tx_throttled, "TX sweeps stopped by the `rate` credit limit")                                 \
  X(rx_packets, "frames delivered to the guest")                                                  \
  X(rx_bytes, "bytes of those frames")                                                            \
  X(rx_slots, "RX ring slots consumed (data and extra-info)")                                     \
  X(rx_drops_no_slots, "frame held for slots the guest never posted (dropped at drain or stall)") \
  X(rx_drops_stale, "frame left in the TAP while the guest posted no buffers (rx_drain_timeout)") \
  X(rx_drops_too_big, "frame needing more slots than a packet may use, or > 1 page without SG")   \
  X(rx_drops_gso_not_negotiated, "GSO frame the frontend did not ask for")                        \
  X(rx_drops_bad_vnet_hdr, "frame whose vnet header we could not honour")                         \
  X(rx_drops_empty, "zero-length frame from the TAP")                                             \
  X(rx_drops_multicast_filtered, "multicast frame not in the guest's filter list")                \
  X(rx_copy_errors, "RX slots answered NETIF_RSP_ERROR because their grant copy failed")          \
  X(rx_checksum_completed, "partial checksums completed for a frontend that cannot take them")    \
  X(rx_hash_extras, "RX packets given a HASH extra (control-ring hashing)")                       \
  X(rx_tap_read_errors, "TAP reads that failed")                                                  \
  X(rx_stalls, "times the guest posted no usable RX buffers for rx_stall_timeout (carrier off)")  \
  X(grant_copy_calls, "batched grant-copy calls")                                                 \
  X(grant_copy_segments, "grant-copy segments in those calls")                                    \
  X(grant_copy_errors, "segments that failed")                                                    \
  X(notify_sent, "event-channel kicks sent to the frontend")                                      \
  X(events_received, "event-channel events received")                                             \
  X(kicks, "operator kicks answered (unetbackctl kick): guest notified, both rings re-read")      \
  X(spurious_events, "events after which neither ring had new requests")                          \
  X(event_storm_backoffs, "times unmasking was delayed because of an event storm (XSA-332)")      \
  X(faults, "faults that stopped the queue (frontend, host or backend: see the log)")             \
  X(poll_spins, "busy-polls started (poll_window.hpp)")                                           \
  X(poll_hits, "busy-polls that found work before the window ended")                              \
  X(poll_us, "microseconds spent busy-polling")                                                   \
  X(poll_refused_steal, "busy-polls not started: dom0's steal time was over poll-max-steal-pct")  \
  X(poll_refused_budget, "busy-polls not started: the queue had spent its poll-budget-pct")

namespace unetback::datapath {

/// Live counters of one queue. Written only by its worker (relaxed
/// load + store, no read-modify-write), read from any thread.
struct queue_counters {
// NOLINTNEXTLINE(bugprone-macro-parentheses): `name` is a declarator, not an expression
#define UNETBACK_DECLARE_COUNTER(name, doc) std::atomic<std::uint64_t> name{0};
  UNETBACK_QUEUE_COUNTERS(UNETBACK_DECLARE_COUNTER)
#undef UNETBACK_DECLARE_COUNTER
};

using util::bump;

/// A plain copy of a queue's counters.
struct queue_counters_snapshot {
#define UNETBACK_DECLARE_SNAPSHOT_FIELD(name, doc) std::uint64_t name = 0;
  UNETBACK_QUEUE_COUNTERS(UNETBACK_DECLARE_SNAPSHOT_FIELD)
#undef UNETBACK_DECLARE_SNAPSHOT_FIELD

  /// Calls f(name, value) for every counter, in declaration order.
  template <class F>
  void for_each_field(F&& f) const {
#define UNETBACK_VISIT_FIELD(name, doc) f(std::string_view(#name), name);
    UNETBACK_QUEUE_COUNTERS(UNETBACK_VISIT_FIELD)
#undef UNETBACK_VISIT_FIELD
  }
};

/// Reads every counter (relaxed).
[[nodiscard]] queue_counters_snapshot snapshot(const queue_counters& c);

/// A flat JSON object: counter name -> value.
[[nodiscard]] nlohmann::json to_json(const queue_counters_snapshot& s);

/// The one-line description of counter `name` (empty if unknown).
[[nodiscard]] std::string_view describe_counter(std::string_view name);

}  // namespace unetback::datapath
