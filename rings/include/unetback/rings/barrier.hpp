#pragma once
// The memory-ordering primitives used on shared ring pages (xen/io/ring.h
// xen_mb/xen_rmb/xen_wmb, docs/protocol.md §2.3). Every access to a shared
// ring index goes through one of these; nothing else in rings/ orders memory.
//
// The ring page is ordinary cacheable memory shared with another domain (or,
// in the simulator, another process); std::atomic_ref gives single, untorn,
// non-elidable accesses to the 32-bit indices.

#include <atomic>
#include <cstdint>

namespace unetback::rings {

static_assert(std::atomic_ref<std::uint32_t>::required_alignment == alignof(std::uint32_t),
              "shared ring indices are naturally aligned u32");
static_assert(std::atomic_ref<std::uint32_t>::is_always_lock_free,
              "lock-free u32 atomics are required for memory shared with a guest");

/// Reads a peer-written index once. Later reads of ring entries are not
/// reordered before it (xen_rmb() after reading req_prod / rsp_prod), and it
/// is not reordered before an earlier publish() of ours (xen_mb() between
/// publishing an index and reading the peer's). seq_cst: on x86 a plain load,
/// on arm64 ldar, the same cost as acquire.
[[nodiscard]] inline std::uint32_t load_acquire(std::uint32_t& shared) {
  return std::atomic_ref<std::uint32_t>(shared).load(std::memory_order_seq_cst);
}

/// Reads a shared index once with no ordering (for diagnostics, or for an
/// index this side wrote itself).
[[nodiscard]] inline std::uint32_t load_relaxed(std::uint32_t& shared) {
  return std::atomic_ref<std::uint32_t>(shared).load(std::memory_order_relaxed);
}

/// Publishes an index or an event threshold: earlier writes of ring entries
/// become visible before it (xen_wmb()), and it is globally visible before any
/// later load_acquire() of the peer's index or threshold (xen_mb()), so no
/// wake-up is lost (ring.h RING_PUSH_*_AND_CHECK_NOTIFY, RING_FINAL_CHECK_*).
/// A seq_cst store: xchg on x86 (a full barrier, like the mb it replaces),
/// stlr on arm64 (ordered before a later ldar). Expressed without a
/// standalone fence so ThreadSanitizer builds model it exactly.
inline void publish(std::uint32_t& shared, std::uint32_t value) {
  std::atomic_ref<std::uint32_t>(shared).store(value, std::memory_order_seq_cst);
}

/// Writes a shared index once with no ordering (ring initialisation before
/// the page is granted).
inline void store_relaxed(std::uint32_t& shared, std::uint32_t value) {
  std::atomic_ref<std::uint32_t>(shared).store(value, std::memory_order_relaxed);
}

/// Compiler-only barrier: after copying a ring entry into private memory the
/// compiler may not re-read the shared entry in place of the copy (XSA-155,
/// the "volatile" in ring.h RING_COPY_REQUEST).
inline void compiler_fence() {
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

}  // namespace unetback::rings
