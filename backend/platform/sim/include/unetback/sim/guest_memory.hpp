#pragma once
// The backend's view of one simulated guest's memory file (layout.hpp). The
// file belongs to a possibly hostile guest: open() checks the memfd seals and
// validates a private copy of the header against the file size; after that,
// every accessor bounds-checks its index against the validated counts.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <system_error>

#include "unetback/rings/ids.hpp"
#include "unetback/sim/layout.hpp"

namespace unetback::sim {

/// How long a backend handle trusts an opened guest file before checking
/// that it is still the published one (the guest may have exited).
inline constexpr std::chrono::milliseconds domain_revalidate_interval{100};

/// <sim_dir>/dom<d>.mem
std::filesystem::path domain_file_path(const std::filesystem::path& sim_dir, domid d);

/// Checks a header copied out of a guest file of `file_size` bytes: magic,
/// version, domid, counts within the max_* bounds, regions in order, aligned,
/// non-overlapping and inside the file. Returns EPROTO (bad magic/version),
/// EINVAL (inconsistent layout) or ESRCH (another domain's file).
std::error_code validate_header(const file_header& h, domid expected, std::uint64_t file_size);

class guest_memory {
 public:
  /// Opens and maps domain `d`'s file. Errors: ESRCH (no such domain or its
  /// owner is gone), EPERM (file not sealed against shrinking), or what
  /// validate_header() returns.
  static std::shared_ptr<guest_memory> open(const std::filesystem::path& sim_dir, domid d,
                                            std::error_code& ec);
  ~guest_memory();
  guest_memory(const guest_memory&) = delete;
  guest_memory& operator=(const guest_memory&) = delete;

  /// The validated private copy of the header.
  [[nodiscard]] const file_header& header() const { return header_; }
  [[nodiscard]] domid id() const { return domid{static_cast<std::uint16_t>(header_.domid)}; }
  /// The grant entry `ref`, or nullptr if ref >= grant_count.
  [[nodiscard]] grant_entry* grant(std::uint32_t ref) const;
  /// Port entry `port`, or nullptr if out of range (port 0 is never valid).
  [[nodiscard]] port_entry* port(std::uint32_t port) const;
  /// The map-record table.
  [[nodiscard]] std::span<map_record> map_records() const;
  /// Start of page `frame`, or nullptr if frame >= page_count.
  [[nodiscard]] std::byte* page(std::uint32_t frame) const;
  /// File offset of page `frame` (frame < page_count), for mmap.
  [[nodiscard]] off_t page_file_offset(std::uint32_t frame) const;
  /// The open file (memfd) descriptor.
  [[nodiscard]] int fd() const { return fd_; }
  /// True if `path` still names the file this view has open.
  [[nodiscard]] bool still_current(const std::filesystem::path& path) const;

 private:
  guest_memory() = default;
  file_header header_{};
  int fd_ = -1;
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace unetback::sim
