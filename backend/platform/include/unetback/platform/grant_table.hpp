#pragma once
// The grant-table seam: what the daemon needs from Xen's grant tables.
// Implementations: xen (libxengnttab, /dev/xen/gntdev) and sim (netfront-sim's
// shared "guest memory"). Fakes with fault injection live in tests/.

// The Xen 4.17 headers have no extern "C" guards of their own.
extern "C" {
#include <xengnttab.h>
}

#include <cstddef>
#include <memory>
#include <span>
#include <system_error>

#include "unetback/rings/ids.hpp"

namespace unetback::platform {

/// One grant-copy segment, laid out exactly as xengnttab_grant_copy_segment_t
/// so the xen implementation passes batches straight to the ioctl.
/// flags: GNTCOPY_source_gref (source is foreign) and/or GNTCOPY_dest_gref.
/// status: out, GNTST_* (0 = GNTST_okay).
using grant_copy_segment = xengnttab_grant_copy_segment_t;

/// Pages mapped from a foreign domain; unmapped on destruction.
class grant_mapping {
 public:
  virtual ~grant_mapping() = default;
  /// Start of the mapped range (pages are contiguous, 4096 bytes each).
  [[nodiscard]] virtual void* data() const = 0;
  /// Number of 4096-byte pages mapped.
  [[nodiscard]] virtual std::size_t page_count() const = 0;
};

/// A grant handle. Not thread-safe: each queue worker owns one.
class grant_table {
 public:
  virtual ~grant_table() = default;

  /// Maps `refs` granted by `granter` contiguously, read-write unless `writable`
  /// is false. All or nothing. Error codes are errno values (EINVAL, EPERM,
  /// ENOENT for a bad ref...). Used for ring pages only, never for data.
  virtual std::unique_ptr<grant_mapping> map(domid granter, std::span<const grant_ref> refs,
                                             bool writable, std::error_code& ec) = 0;

  /// Executes every segment of the batch and writes each segment's status.
  /// Returns false only when the whole call failed (then every status is set
  /// to an error too); a true return still requires checking each status.
  /// Foreign sides must not cross a 4096-byte page (status GNTST_bad_copy_arg).
  virtual bool copy(std::span<grant_copy_segment> batch) = 0;
};

}  // namespace unetback::platform
