#pragma once
// The guest side of the simulated hypervisor (used by netfront-sim): one
// simulated domain's memory, grant table and event-channel ports, published as
// <sim_dir>/dom<D>.mem for the backend (layout.hpp, docs/sim-platform.md).
// The API mirrors Linux's grant-table and event-channel calls:
// gnttab_grant_foreign_access(_ref), gnttab_end_foreign_access(_ref),
// gnttab_claim/release_grant_reference, xenevtchn alloc_unbound/notify.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <system_error>
#include <vector>

#include "unetback/rings/ids.hpp"
#include "unetback/sim/layout.hpp"

namespace unetback::sim {

class guest_event_channel;

/// Sizes of a simulated domain.
struct domain_config {
  std::filesystem::path sim_dir = "/run/unetback-sim";
  domid id{1};
  std::uint32_t page_count = 4096;
  std::uint32_t grant_count = 8192;
  std::uint32_t port_count = 1024;
  std::uint32_t map_record_count = 1024;
};

/// How a page is granted (GTF_readonly or not).
enum class grant_mode : std::uint8_t { read_write, read_only };

/// Grant refs below this are reserved, as Xen's GNTTAB_NR_RESERVED_ENTRIES.
inline constexpr std::uint32_t first_free_grant_ref = 8;

class guest_domain {
 public:
  /// Creates the domain's memory (a sealed memfd) and publishes it. Throws
  /// std::invalid_argument for bad sizes, std::system_error(EEXIST) if a live
  /// process already owns domain `id` under this sim_dir.
  explicit guest_domain(const domain_config& config);
  /// Unpublishes the file (the backend's next revalidation fails with
  /// GNTST_bad_domain) and unmaps it.
  ~guest_domain();
  guest_domain(const guest_domain&) = delete;
  guest_domain& operator=(const guest_domain&) = delete;

  [[nodiscard]] domid id() const { return id_; }
  [[nodiscard]] const std::filesystem::path& sim_dir() const { return sim_dir_; }
  [[nodiscard]] std::uint64_t generation() const { return header().generation; }
  [[nodiscard]] std::uint32_t page_count() const { return header().page_count; }
  [[nodiscard]] std::uint32_t grant_count() const { return header().grant_count; }

  /// Allocates a zeroed page. Throws std::runtime_error when none is free.
  std::uint32_t alloc_page();
  /// Returns a page to the allocator (it must no longer be granted).
  void free_page(std::uint32_t page);
  /// The page's memory. Throws std::out_of_range for a bad index.
  [[nodiscard]] std::span<std::byte, page_size> page(std::uint32_t page) const;

  /// Claims a free grant ref and grants `page` to `grantee` through it.
  /// Throws std::runtime_error when the table is full.
  grant_ref grant_access(std::uint32_t page, domid grantee, grant_mode mode);
  /// Revokes `ref` and releases it. EBUSY while a live backend has it mapped
  /// (gnttab_end_foreign_access_ref semantics; dead mappers are reaped first).
  std::error_code end_access(grant_ref ref);
  /// Claims a ref without granting (gnttab_claim_grant_reference).
  grant_ref claim_ref();
  /// Releases a claimed, revoked ref.
  void release_ref(grant_ref ref);
  /// (Re-)grants claimed `ref` (gnttab_grant_foreign_access_ref).
  void grant_access_ref(grant_ref ref, std::uint32_t page, domid grantee, grant_mode mode);
  /// Revokes `ref`, keeping it claimed. EBUSY while mapped, EINVAL bad ref.
  std::error_code end_access_ref(grant_ref ref);
  /// True while GTF_reading or GTF_writing is set.
  [[nodiscard]] bool in_use(grant_ref ref) const;

  /// A new event-channel handle of this domain (one per thread).
  std::unique_ptr<guest_event_channel> open_event_channel();

  /// Raw shared structures, for hostile-guest tests. Throw std::out_of_range.
  [[nodiscard]] grant_entry& raw_grant(std::uint32_t ref) const;
  [[nodiscard]] port_entry& raw_port(std::uint32_t port) const;
  [[nodiscard]] std::span<map_record> raw_map_records() const;

 private:
  [[nodiscard]] const file_header& header() const;
  void create_file(const domain_config& config);
  void publish();
  void reap_dead_mappers(std::uint32_t ref);

  std::filesystem::path sim_dir_;
  domid id_;
  int fd_ = -1;
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  std::string link_target_;
  std::mutex mutex_;  // guards the free lists (guest-private)
  std::vector<std::uint32_t> free_pages_;
  std::vector<std::uint32_t> free_refs_;
};

}  // namespace unetback::sim
