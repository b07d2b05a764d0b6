#pragma once
// Grant-entry rules shared by the backend (sim_grant_table) and the guest
// (guest_domain), in the spirit of Xen's grant_table.c: checking an entry for
// a use, pinning it for a mapping (GTF_reading/GTF_writing + a map record),
// and recomputing the in-use bits from the live map records.

#include <cstdint>
#include <span>

#include "unetback/rings/ids.hpp"
#include "unetback/sim/layout.hpp"

namespace unetback::sim::detail {

/// Result of checking a grant entry: a GNTST_* status and, when okay, the
/// granted frame (already range-checked against `page_count`).
struct grant_check {
  std::int16_t status;
  std::uint32_t frame;
};

/// Whether the access needs write permission.
enum class access_mode : std::uint8_t { read, write };

/// Checks entry `e` for use by `self` (one read of each field):
/// not GTF_permit_access => GNTST_bad_gntref; granted to another domain or
/// read-only for a write => GNTST_permission_denied; frame >= page_count =>
/// GNTST_bad_copy_arg. (Xen itself answers GNTST_general_error for the
/// permission cases; the sim is more specific on purpose.)
grant_check check_entry(grant_entry& e, domid self, access_mode mode, std::uint32_t page_count);

/// Pins grant `ref` for a mapping by `holder`: claims a map record, then sets
/// GTF_reading (and GTF_writing) with a bounded compare-exchange that re-checks
/// the entry. Returns the check result; `record` receives the claimed record
/// index on success.
struct pin_result {
  grant_check check;
  std::uint32_t record;
};
pin_result pin_for_map(grant_entry& e, std::span<map_record> records, std::uint32_t ref, domid self,
                       access_mode mode, std::uint32_t page_count, std::uint64_t holder);

/// Releases map record `record` of `ref` and recomputes the entry's in-use bits.
void unpin(grant_entry& e, std::span<map_record> records, std::uint32_t ref, std::uint32_t record);

/// Sets the entry's GTF_reading/GTF_writing to what the live records of `ref`
/// say (bounded; re-checks once for a racing pin).
void refresh_in_use_bits(grant_entry& e, std::span<map_record> records, std::uint32_t ref);

}  // namespace unetback::sim::detail
