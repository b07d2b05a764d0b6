#include "grant_ops.hpp"

#include <optional>

#include "cas_limits.hpp"

namespace unetback::sim::detail {
namespace {

std::int16_t check_word(std::uint32_t word, domid self, access_mode mode) {
  const std::uint16_t flags = grant_flags(word);
  if ((flags & GTF_type_mask) != GTF_permit_access) {
    return GNTST_bad_gntref;
  }
  if (grant_domid(word) != self.value()) {
    return GNTST_permission_denied;
  }
  if (mode == access_mode::write && (flags & GTF_readonly) != 0) {
    return GNTST_permission_denied;
  }
  return GNTST_okay;
}

std::uint16_t bits_from_records(std::span<map_record> records, std::uint32_t ref) {
  std::uint16_t bits = 0;
  for (map_record& r : records) {
    if (shared(r.ref_plus_one).load() == ref + 1) {
      bits |= GTF_reading;
      if (shared(r.writable).load(std::memory_order_relaxed) != 0) {
        bits |= GTF_writing;
      }
    }
  }
  return bits;
}

std::optional<std::uint32_t> claim_record(std::span<map_record> records, std::uint32_t ref,
                                          access_mode mode, std::uint64_t holder) {
  for (std::uint32_t i = 0; i < records.size(); ++i) {
    std::uint32_t expected = 0;
    if (shared(records[i].ref_plus_one).compare_exchange_strong(expected, ref + 1)) {
      shared(records[i].writable).store(mode == access_mode::write ? 1U : 0U);
      shared(records[i].holder_endpoint).store(holder);
      return i;
    }
  }
  return std::nullopt;
}

void release_record(map_record& r) {
  shared(r.holder_endpoint).store(0);
  shared(r.writable).store(0);
  shared(r.ref_plus_one).store(0);
}

}  // namespace

grant_check check_entry(grant_entry& e, domid self, access_mode mode, std::uint32_t page_count) {
  const std::uint32_t word = shared(e.flags_domid).load(std::memory_order_acquire);
  const std::int16_t status = check_word(word, self, mode);
  if (status != GNTST_okay) {
    return {status, 0};
  }
  const std::uint32_t frame = shared(e.frame).load(std::memory_order_relaxed);
  if (frame >= page_count) {
    return {GNTST_bad_copy_arg, 0};
  }
  return {GNTST_okay, frame};
}

pin_result pin_for_map(grant_entry& e, std::span<map_record> records, std::uint32_t ref, domid self,
                       access_mode mode, std::uint32_t page_count, std::uint64_t holder) {
  const grant_check first = check_entry(e, self, mode, page_count);
  if (first.status != GNTST_okay) {
    return {first, 0};
  }
  const auto claimed = claim_record(records, ref, mode, holder);
  if (!claimed) {
    return {{GNTST_no_space, 0}, 0};
  }
  const std::uint32_t record = *claimed;
  const auto bits = static_cast<std::uint16_t>(
      mode == access_mode::write ? (GTF_reading | GTF_writing) : GTF_reading);
  std::uint32_t word = shared(e.flags_domid).load();
  for (int attempt = 0; attempt < max_cas_attempts; ++attempt) {
    const std::int16_t status = check_word(word, self, mode);
    if (status != GNTST_okay) {
      release_record(records[record]);
      return {{status, 0}, 0};
    }
    if (shared(e.flags_domid).compare_exchange_strong(word, word | bits)) {
      // Read the frame only once the entry is pinned, as Xen does.
      const std::uint32_t frame = shared(e.frame).load();
      if (frame >= page_count) {
        unpin(e, records, ref, record);
        return {{GNTST_bad_page, 0}, 0};
      }
      return {{GNTST_okay, frame}, record};
    }
  }
  release_record(records[record]);
  return {{GNTST_general_error, 0}, 0};  // "shared grant entry is unstable"
}

void unpin(grant_entry& e, std::span<map_record> records, std::uint32_t ref, std::uint32_t record) {
  if (record < records.size() && shared(records[record].ref_plus_one).load() == ref + 1) {
    release_record(records[record]);
  }
  refresh_in_use_bits(e, records, ref);
}

void refresh_in_use_bits(grant_entry& e, std::span<map_record> records, std::uint32_t ref) {
  const std::uint16_t wanted = bits_from_records(records, ref);
  std::uint32_t word = shared(e.flags_domid).load();
  for (int attempt = 0; attempt < max_cas_attempts; ++attempt) {
    const std::uint32_t next = (word & ~static_cast<std::uint32_t>(gtf_in_use)) | wanted;
    if (next == word || shared(e.flags_domid).compare_exchange_strong(word, next)) {
      break;
    }
  }
  // A mapper may have pinned between the scan and the store: put its bits back.
  const std::uint16_t again = bits_from_records(records, ref);
  if ((again & ~wanted) != 0) {
    shared(e.flags_domid).fetch_or(again);
  }
}

}  // namespace unetback::sim::detail
