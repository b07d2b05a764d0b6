#pragma once
// Counters of one queue's direct path: the frames it moved past the TAP, which
// the TAP's own statistics cannot show, and why the others went to the host.
// Written only by the queue's worker (relaxed load + store), read by any thread.

#include <array>
#include <atomic>
#include <cstdint>

#include "unetback/direct/frame_route.hpp"
#include "unetback/util/worker_counter.hpp"

namespace unetback::direct {

struct direct_counters {
  std::atomic<std::uint64_t> tx_packets{0};        ///< frames handed to a peer's queue
  std::atomic<std::uint64_t> tx_bytes{0};          ///< their Ethernet bytes
  std::atomic<std::uint64_t> tx_drops_full{0};     ///< dropped: the peer's ring was full
  std::atomic<std::uint64_t> rx_packets{0};        ///< frames taken from a peer's ring
  std::atomic<std::uint64_t> rx_bytes{0};          ///< their Ethernet bytes
  std::atomic<std::uint64_t> rx_drops_too_big{0};  ///< records longer than the read buffer
  std::atomic<std::uint64_t> learning_frames{0};   ///< for the bridge (fdb_refresh.hpp)
  /// Frames written to the TAP while the queue had peers, by reason.
  std::array<std::atomic<std::uint64_t>, route_reason_count> to_host{};
};

using util::bump;

/// A plain copy of one queue's direct_counters.
struct direct_counts {
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t tx_drops_full = 0;
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t rx_drops_too_big = 0;
  std::uint64_t learning_frames = 0;
  std::array<std::uint64_t, route_reason_count> to_host{};
};

/// Reads `c` (any thread; each counter on its own, like the queue counters).
[[nodiscard]] inline direct_counts read_counts(const direct_counters& c) {
  direct_counts out;
  out.tx_packets = c.tx_packets.load(std::memory_order_relaxed);
  out.tx_bytes = c.tx_bytes.load(std::memory_order_relaxed);
  out.tx_drops_full = c.tx_drops_full.load(std::memory_order_relaxed);
  out.rx_packets = c.rx_packets.load(std::memory_order_relaxed);
  out.rx_bytes = c.rx_bytes.load(std::memory_order_relaxed);
  out.rx_drops_too_big = c.rx_drops_too_big.load(std::memory_order_relaxed);
  out.learning_frames = c.learning_frames.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < route_reason_count; ++i) {
    out.to_host[i] = c.to_host[i].load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace unetback::direct
