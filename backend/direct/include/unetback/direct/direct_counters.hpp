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

/// route_reason's values, for an array indexed by them.
inline constexpr std::size_t route_reason_count =
    static_cast<std::size_t>(route_reason::offload_refused) + 1;

struct direct_counters {
  std::atomic<std::uint64_t> tx_packets{0};        ///< frames handed to a peer's queue
  std::atomic<std::uint64_t> tx_bytes{0};          ///< their Ethernet bytes
  std::atomic<std::uint64_t> tx_drops_full{0};     ///< dropped: the peer's ring was full
  std::atomic<std::uint64_t> rx_packets{0};        ///< frames taken from a peer's ring
  std::atomic<std::uint64_t> rx_bytes{0};          ///< their Ethernet bytes
  std::atomic<std::uint64_t> rx_drops_too_big{0};  ///< records longer than the read buffer
  /// Frames written to the TAP while the queue had peers, by reason.
  std::array<std::atomic<std::uint64_t>, route_reason_count> to_host{};
};

using util::bump;

}  // namespace unetback::direct
