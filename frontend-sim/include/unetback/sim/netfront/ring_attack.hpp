#pragma once
// Named attacks on a connected device's rings, for netfront-sim --attack:
// the same attacks the hostile tier runs on the sim platform (tests/hostile:
// ring_indices, tx_slots, grants, events), runnable inside a real domU so
// that a backend's reaction can be compared on real Xen (docs/security.md).
// Each stops queue 0's worker, writes its requests with a slot buffer the
// queue already owns (or moves a producer index, or rings the doorbell),
// kicks, and collects the TX responses.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "unetback/sim/netfront/frontend_device.hpp"

namespace unetback::sim {

enum class ring_attack : std::uint8_t {
  req_prod_overflow,     ///< req_prod one past a full ring beyond the consumer
  slot_crossing_page,    ///< one slot at offset 4000 with 200 bytes
  bad_gref,              ///< one 60-byte slot with a grant ref never granted
  twenty_two_slots,      ///< one packet of 22 slots
  rx_req_prod_overflow,  ///< RX req_prod one past a full ring beyond the consumer
  kick_storm,            ///< the TX port kicked without a request, for 2 s
};

[[nodiscard]] std::optional<ring_attack> parse_ring_attack(std::string_view name);
[[nodiscard]] std::string_view to_string(ring_attack a);
/// Every attack's name, for --help.
[[nodiscard]] std::vector<std::string_view> ring_attack_names();

/// What came back: the status of every TX response within the wait, and
/// the kicks sent (kick_storm).
struct ring_attack_outcome {
  std::vector<std::int16_t> statuses;
  std::uint64_t kicks = 0;
};

/// Runs `a` on queue 0 of `dev` (Connected), then collects TX responses for
/// `wait`. Queue 0's worker stays stopped: the device is the attack's now.
ring_attack_outcome run_ring_attack(frontend_device& dev, ring_attack a,
                                    std::chrono::milliseconds wait);

}  // namespace unetback::sim
