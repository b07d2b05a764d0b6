#include "unetback/sim/guest_domain.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "cas_limits.hpp"
#include "grant_ops.hpp"
#include "unetback/sim/endpoint.hpp"
#include "unetback/sim/guest_event_channel.hpp"
#include "unetback/sim/guest_memory.hpp"

namespace unetback::sim {
namespace {

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

file_header plan_layout(const domain_config& c) {
  if (c.page_count == 0 || c.page_count > max_page_count || c.grant_count <= first_free_grant_ref ||
      c.grant_count > max_grant_count || c.port_count < 2 || c.port_count > max_port_count ||
      c.map_record_count == 0 || c.map_record_count > max_map_record_count) {
    throw std::invalid_argument("guest_domain: page/grant/port/map-record counts out of range");
  }
  file_header h{};
  h.magic = layout_magic;
  h.version = layout_version;
  h.header_size = sizeof(file_header);
  h.domid = c.id.value();
  h.owner_pid = static_cast<std::uint32_t>(::getpid());
  h.grant_count = c.grant_count;
  h.port_count = c.port_count;
  h.map_record_count = c.map_record_count;
  h.page_count = c.page_count;
  h.grant_offset = page_size;
  h.port_offset = align_up(h.grant_offset + std::uint64_t{c.grant_count} * sizeof(grant_entry), 64);
  h.map_record_offset = h.port_offset + std::uint64_t{c.port_count} * sizeof(port_entry);
  h.page_offset = align_up(
      h.map_record_offset + std::uint64_t{c.map_record_count} * sizeof(map_record), page_size);
  h.file_size = h.page_offset + std::uint64_t{c.page_count} * page_size;
  if (getrandom(&h.generation, sizeof h.generation, 0) !=
      static_cast<ssize_t>(sizeof h.generation)) {
    h.generation = static_cast<std::uint64_t>(::getpid()) << 32U;
  }
  return h;
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

guest_domain::guest_domain(const domain_config& config) : sim_dir_(config.sim_dir), id_(config.id) {
  std::filesystem::create_directories(sim_dir_);
  create_file(config);
  try {
    publish();
  } catch (...) {
    ::munmap(base_, size_);
    ::close(fd_);
    throw;
  }
  for (std::uint32_t p = config.page_count; p > 0; --p) {
    free_pages_.push_back(p - 1);
  }
  for (std::uint32_t r = config.grant_count; r > first_free_grant_ref; --r) {
    free_refs_.push_back(r - 1);
  }
}

void guest_domain::create_file(const domain_config& config) {
  const file_header h = plan_layout(config);
  fd_ = ::memfd_create(fmt::format("unetback-sim-dom{}", id_.value()).c_str(),
                       MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd_ < 0) {
    throw_errno("memfd_create");
  }
  size_ = static_cast<std::size_t>(h.file_size);
  void* base = MAP_FAILED;
  if (::ftruncate(fd_, static_cast<off_t>(size_)) == 0) {
    base = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  }
  if (base == MAP_FAILED ||
      ::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::system_error(err, std::generic_category(), "guest memory file");
  }
  base_ = static_cast<std::byte*>(base);
  std::memcpy(base_, &h, sizeof h);  // the rest of the file is zero: free entries
}

// Publishes <sim_dir>/dom<D>.mem as a link to our memfd through /proc, so it
// dangles as soon as we exit (the backend then sees GNTST_bad_domain).
void guest_domain::publish() {
  const auto path = domain_file_path(sim_dir_, id_);
  const int existing = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (existing >= 0) {
    ::close(existing);
    throw std::system_error(
        EEXIST, std::generic_category(),
        fmt::format("domain {} already exists in {}", id_.value(), sim_dir_.string()));
  }
  link_target_ = fmt::format("/proc/{}/fd/{}", ::getpid(), fd_);
  const auto tmp = path.string() + fmt::format(".tmp{}", ::getpid());
  ::unlink(tmp.c_str());
  if (::symlink(link_target_.c_str(), tmp.c_str()) != 0) {
    throw_errno("symlink " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw_errno("rename " + tmp);
  }
}

guest_domain::~guest_domain() {
  const auto path = domain_file_path(sim_dir_, id_);
  std::error_code ec;
  if (std::filesystem::read_symlink(path, ec) == link_target_ && !ec) {
    ::unlink(path.c_str());
  }
  ::munmap(base_, size_);
  ::close(fd_);
}

const file_header& guest_domain::header() const {
  return *reinterpret_cast<const file_header*>(base_);
}

std::uint32_t guest_domain::alloc_page() {
  std::uint32_t p = 0;
  {
    std::lock_guard lock(mutex_);
    if (free_pages_.empty()) {
      throw std::runtime_error(fmt::format("dom{}: out of guest pages", id_.value()));
    }
    p = free_pages_.back();
    free_pages_.pop_back();
  }
  std::memset(page(p).data(), 0, page_size);
  return p;
}

void guest_domain::free_page(std::uint32_t p) {
  (void)page(p);  // range check
  std::lock_guard lock(mutex_);
  free_pages_.push_back(p);
}

std::span<std::byte, page_size> guest_domain::page(std::uint32_t p) const {
  if (p >= header().page_count) {
    throw std::out_of_range(fmt::format("dom{}: no page {}", id_.value(), p));
  }
  return std::span<std::byte, page_size>(
      base_ + header().page_offset + static_cast<std::size_t>(p) * page_size, page_size);
}

grant_ref guest_domain::claim_ref() {
  std::lock_guard lock(mutex_);
  if (free_refs_.empty()) {
    throw std::runtime_error(fmt::format("dom{}: grant table full", id_.value()));
  }
  const std::uint32_t r = free_refs_.back();
  free_refs_.pop_back();
  return grant_ref{r};
}

void guest_domain::release_ref(grant_ref ref) {
  (void)raw_grant(ref.value());  // range check
  std::lock_guard lock(mutex_);
  free_refs_.push_back(ref.value());
}

void guest_domain::grant_access_ref(grant_ref ref, std::uint32_t p, domid grantee,
                                    grant_mode mode) {
  (void)page(p);
  grant_entry& e = raw_grant(ref.value());
  // Frame first, then flags with release: the grantee sees a complete entry.
  shared(e.frame).store(p, std::memory_order_relaxed);
  const auto flags = static_cast<std::uint16_t>(
      GTF_permit_access | (mode == grant_mode::read_only ? GTF_readonly : 0U));
  shared(e.flags_domid).store(grant_word(flags, grantee.value()), std::memory_order_release);
}

grant_ref guest_domain::grant_access(std::uint32_t p, domid grantee, grant_mode mode) {
  const grant_ref ref = claim_ref();
  grant_access_ref(ref, p, grantee, mode);
  return ref;
}

std::error_code guest_domain::end_access_ref(grant_ref ref) {
  if (ref.value() >= header().grant_count) {
    return {EINVAL, std::generic_category()};
  }
  grant_entry& e = raw_grant(ref.value());
  for (int attempt = 0; attempt < max_cas_attempts; ++attempt) {
    std::uint32_t w = shared(e.flags_domid).load();
    if ((grant_flags(w) & gtf_in_use) != 0) {
      reap_dead_mappers(ref.value());
      w = shared(e.flags_domid).load();
      if ((grant_flags(w) & gtf_in_use) != 0) {
        return {EBUSY, std::generic_category()};
      }
    }
    if (shared(e.flags_domid).compare_exchange_strong(w, 0)) {
      return {};
    }
  }
  return {EBUSY, std::generic_category()};
}

std::error_code guest_domain::end_access(grant_ref ref) {
  const std::error_code ec = end_access_ref(ref);
  if (!ec) {
    release_ref(ref);
  }
  return ec;
}

bool guest_domain::in_use(grant_ref ref) const {
  return (grant_flags(shared(raw_grant(ref.value()).flags_domid).load()) & gtf_in_use) != 0;
}

// A mapper that died without unmapping left its record (and the in-use bits):
// Xen would have unmapped when its gntdev file was closed. Reap such records.
void guest_domain::reap_dead_mappers(std::uint32_t ref) {
  std::span<map_record> records = raw_map_records();
  for (map_record& r : records) {
    if (shared(r.ref_plus_one).load() != ref + 1) {
      continue;
    }
    const std::uint64_t holder = shared(r.holder_endpoint).load();
    if (!endpoint::alive(sim_dir_, holder)) {
      std::uint32_t expected = ref + 1;
      if (shared(r.ref_plus_one).compare_exchange_strong(expected, 0)) {
        endpoint::remove_stale(sim_dir_, holder);
      }
    }
  }
  detail::refresh_in_use_bits(raw_grant(ref), records, ref);
}

grant_entry& guest_domain::raw_grant(std::uint32_t ref) const {
  if (ref >= header().grant_count) {
    throw std::out_of_range(fmt::format("dom{}: no grant ref {}", id_.value(), ref));
  }
  return reinterpret_cast<grant_entry*>(base_ + header().grant_offset)[ref];
}

port_entry& guest_domain::raw_port(std::uint32_t port) const {
  if (port == 0 || port >= header().port_count) {
    throw std::out_of_range(fmt::format("dom{}: no port {}", id_.value(), port));
  }
  return reinterpret_cast<port_entry*>(base_ + header().port_offset)[port];
}

std::span<map_record> guest_domain::raw_map_records() const {
  return {reinterpret_cast<map_record*>(base_ + header().map_record_offset),
          header().map_record_count};
}

std::unique_ptr<guest_event_channel> guest_domain::open_event_channel() {
  return std::make_unique<guest_event_channel>(*this);
}

}  // namespace unetback::sim
