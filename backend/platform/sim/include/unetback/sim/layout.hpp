#pragma once
// The simulated guest's memory file, <sim_dir>/dom<D>.mem (docs/sim-platform.md).
//
// The guest (netfront-sim) creates a sealed memfd, lays it out as below and
// publishes it as a symlink to /proc/<pid>/fd/<n>; the backend (sim_platform)
// opens that path, checks the seals (so the guest cannot shrink the file under
// our mappings: no SIGBUS) and validates the header against the file size
// before using anything in it. Every shared field is accessed with
// std::atomic_ref (lock-free, address-free), and loops on shared state are
// bounded: the guest is hostile.
//
//   offset 0             file_header (one page)
//   grant_offset         grant_count x grant_entry   (like grant_entry_v1)
//   port_offset          port_count  x port_entry    (event-channel ports)
//   map_record_offset    map_record_count x map_record (who maps which grant)
//   page_offset          page_count x 4096-byte guest pages (page aligned)

#include <xen/grant_table.h>

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace unetback::sim {

/// Size of a guest page (XEN_PAGE_SIZE on x86).
inline constexpr std::size_t page_size = 4096;
/// "USIMDOM1", little-endian.
inline constexpr std::uint64_t layout_magic = 0x314d4f444d495355ULL;
inline constexpr std::uint32_t layout_version = 1;

/// Upper bounds the backend enforces on a guest's header (bounded work).
inline constexpr std::uint32_t max_grant_count = 1U << 20;
inline constexpr std::uint32_t max_port_count = 1U << 16;
inline constexpr std::uint32_t max_map_record_count = 1U << 16;
inline constexpr std::uint32_t max_page_count = 1U << 20;

static_assert(std::endian::native == std::endian::little, "layout assumes little-endian");

/// The first page of the file. Written once by the guest before publication;
/// the backend reads it once into private memory and never again.
struct file_header {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t header_size;  ///< sizeof(file_header)
  std::uint64_t generation;   ///< random boot id of this guest incarnation
  std::uint32_t domid;
  std::uint32_t owner_pid;
  std::uint32_t grant_count;
  std::uint32_t port_count;
  std::uint32_t map_record_count;
  std::uint32_t page_count;
  std::uint64_t grant_offset;
  std::uint64_t port_offset;
  std::uint64_t map_record_offset;
  std::uint64_t page_offset;
  std::uint64_t file_size;
};

/// A grant entry laid out like grant_entry_v1 (xen/grant_table.h): flags u16,
/// domid u16, frame u32. flags and domid are accessed together as one 32-bit
/// word (flags in the low half), so the backend can set GTF_reading/GTF_writing
/// with a compare-exchange that also checks the domid, as Xen does.
struct grant_entry {
  std::uint32_t flags_domid;  ///< low 16: GTF_* flags; high 16: grantee domid
  std::uint32_t frame;        ///< index of the granted page in this file
};
static_assert(sizeof(grant_entry) == sizeof(grant_entry_v1_t));
static_assert(offsetof(grant_entry_v1_t, flags) == 0 && offsetof(grant_entry_v1_t, domid) == 2);
static_assert(offsetof(grant_entry_v1_t, frame) == offsetof(grant_entry, frame));

constexpr std::uint32_t grant_word(std::uint16_t flags, std::uint16_t domid) {
  return static_cast<std::uint32_t>(flags) | (static_cast<std::uint32_t>(domid) << 16U);
}
constexpr std::uint16_t grant_flags(std::uint32_t word) {
  return static_cast<std::uint16_t>(word & 0xffffU);
}
constexpr std::uint16_t grant_domid(std::uint32_t word) {
  return static_cast<std::uint16_t>(word >> 16U);
}
inline constexpr std::uint16_t gtf_in_use = GTF_reading | GTF_writing;

/// Port states (low 8 bits of port_entry::state; the high 24 bits count
/// transitions so compare-exchanges cannot suffer ABA).
enum class port_state : std::uint8_t {
  free = 0,      ///< not allocated
  unbound = 1,   ///< offered by the guest to remote_domid (alloc_unbound)
  bound = 2,     ///< bound by binder_endpoint (interdomain)
  changing = 3,  ///< being (re)written by its new owner; treat as not bound
};
constexpr std::uint32_t port_word(port_state s, std::uint32_t seq) {
  return static_cast<std::uint32_t>(s) | (seq << 8U);
}
constexpr port_state port_word_state(std::uint32_t w) {
  return static_cast<port_state>(w & 0xffU);
}
constexpr std::uint32_t port_word_next(std::uint32_t w, port_state s) {
  return port_word(s, (w >> 8U) + 1U);
}

/// One event-channel port of the guest (its local port number is the index).
/// "to_guest" fields are the guest's receive side, "to_backend" the binder's.
struct port_entry {
  std::uint32_t state;             ///< port_word()
  std::uint32_t remote_domid;      ///< the only domain allowed to bind (alloc_unbound)
  std::uint64_t owner_endpoint;    ///< guest handle's endpoint id (receives to-guest kicks)
  std::uint64_t binder_endpoint;   ///< binder handle's endpoint id (receives to-backend kicks)
  std::uint32_t binder_port;       ///< the binder's local port number
  std::uint32_t binder_domid;      ///< the binder's domain
  std::uint32_t pending_to_guest;  ///< 1: a kick for the guest is latched
  std::uint32_t masked_guest;      ///< 1: the guest masked this port (hint for senders)
  std::uint32_t pending_to_backend;
  std::uint32_t masked_backend;
  std::uint32_t reserved[4];
};
static_assert(sizeof(port_entry) == 64);

/// Records one grant mapped by a backend handle; the guest uses the records
/// to find out whether an in-use grant's mappers are still alive.
struct map_record {
  std::uint32_t ref_plus_one;     ///< 0: free slot; else grant ref + 1
  std::uint32_t writable;         ///< 1: mapped for writing
  std::uint64_t holder_endpoint;  ///< mapper's endpoint id (0 while being filled)
};
static_assert(sizeof(map_record) == 16);

/// Atomic view of a u32/u64 field in shared memory.
template <class T>
std::atomic_ref<T> shared(T& field) {
  static_assert(std::atomic_ref<T>::is_always_lock_free, "shared memory needs lock-free atomics");
  return std::atomic_ref<T>(field);
}

}  // namespace unetback::sim
