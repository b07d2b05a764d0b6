#pragma once
// A counter written by one thread only (a queue's worker) and read by any:
// a relaxed load and store, no read-modify-write on the hot path.

#include <atomic>
#include <cstdint>

namespace unetback::util {

/// Adds `n` to a counter owned by the calling worker thread.
inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace unetback::util
