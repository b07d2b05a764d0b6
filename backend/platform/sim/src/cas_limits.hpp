#pragma once
// How often the sim platform retries a compare-and-swap on shared memory that
// another process (the other domain) may change under it, as Xen bounds its
// own grant-status updates (_set_status_v1): a peer that keeps changing the
// word makes the operation fail, never spin.

namespace unetback::sim {

inline constexpr int max_cas_attempts = 4;

}  // namespace unetback::sim
