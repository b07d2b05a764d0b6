#pragma once
// Named attacks on a connected device's TX ring, for netfront-sim --attack:
// the same attacks the hostile tier runs on the sim platform (tests/hostile:
// ring_indices, tx_slots, grants), runnable inside a real domU so that a
// backend's reaction can be compared on real Xen (docs/security.md).
// Each stops queue 0's worker, writes its requests with a slot buffer the
// queue already owns, pushes, kicks, and collects the TX responses.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "unetback/sim/netfront/frontend_device.hpp"

namespace unetback::sim {

enum class tx_attack : std::uint8_t {
  req_prod_overflow,   ///< req_prod one past a full ring beyond the consumer
  slot_crossing_page,  ///< one slot at offset 4000 with 200 bytes
  bad_gref,            ///< one 60-byte slot with a grant ref never granted
  twenty_two_slots,    ///< one packet of 22 slots
};

[[nodiscard]] std::optional<tx_attack> parse_tx_attack(std::string_view name);
[[nodiscard]] std::string_view to_string(tx_attack a);
/// Every attack's name, for --help.
[[nodiscard]] std::vector<std::string_view> tx_attack_names();

/// What came back: the status of every TX response within the wait.
struct tx_attack_outcome {
  std::vector<std::int16_t> statuses;
};

/// Runs `a` on queue 0 of `dev` (Connected), then collects TX responses for
/// `wait`. Queue 0's worker stays stopped: the device is the attack's now.
tx_attack_outcome run_tx_attack(frontend_device& dev, tx_attack a, std::chrono::milliseconds wait);

}  // namespace unetback::sim
