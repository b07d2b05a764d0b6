#include "sim_grant_table.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

namespace unetback::sim {
namespace {

/// The errno a map() failure reports for a GNTST_* status.
int map_errno(std::int16_t status) {
  switch (status) {
    case GNTST_bad_domain:
      return ESRCH;
    case GNTST_bad_gntref:
      return ENOENT;
    case GNTST_permission_denied:
      return EPERM;
    case GNTST_no_space:
      return ENOSPC;
    case GNTST_general_error:
      return EAGAIN;
    default:
      return EINVAL;
  }
}

struct pinned {
  std::uint32_t ref;
  std::uint32_t record;
};

void unpin_all(guest_memory& mem, const std::vector<pinned>& pins) {
  for (const pinned& p : pins) {
    detail::unpin(*mem.grant(p.ref), mem.map_records(), p.ref, p.record);
  }
}

/// Pages of the guest file mapped contiguously; unpinned and unmapped on
/// destruction (like xengnttab_unmap clearing GTF_reading/GTF_writing).
class sim_grant_mapping final : public platform::grant_mapping {
 public:
  sim_grant_mapping(void* addr, std::size_t pages, std::shared_ptr<guest_memory> mem,
                    std::vector<pinned> pins, std::shared_ptr<endpoint> holder)
      : addr_(addr),
        pages_(pages),
        mem_(std::move(mem)),
        pins_(std::move(pins)),
        holder_(std::move(holder)) {}
  ~sim_grant_mapping() override {
    ::munmap(addr_, pages_ * page_size);
    unpin_all(*mem_, pins_);
  }
  sim_grant_mapping(const sim_grant_mapping&) = delete;
  sim_grant_mapping& operator=(const sim_grant_mapping&) = delete;
  [[nodiscard]] void* data() const override { return addr_; }
  [[nodiscard]] std::size_t page_count() const override { return pages_; }

 private:
  void* addr_;
  std::size_t pages_;
  std::shared_ptr<guest_memory> mem_;
  std::vector<pinned> pins_;
  std::shared_ptr<endpoint> holder_;
};

/// Maps each pinned frame of `mem` at consecutive addresses (like gntdev).
void* map_frames(const guest_memory& mem, const std::vector<std::uint32_t>& frames, bool writable,
                 std::error_code& ec) {
  const std::size_t bytes = frames.size() * page_size;
  void* base = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    ec = {errno, std::generic_category()};
    return nullptr;
  }
  const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    void* at = static_cast<std::byte*>(base) + i * page_size;
    if (::mmap(at, page_size, prot, MAP_SHARED | MAP_FIXED, mem.fd(),
               mem.page_file_offset(frames[i])) == MAP_FAILED) {
      ec = {errno, std::generic_category()};
      ::munmap(base, bytes);
      return nullptr;
    }
  }
  return base;
}

}  // namespace

sim_grant_table::sim_grant_table(std::filesystem::path sim_dir, domid self)
    : cache_(std::move(sim_dir)),
      self_(self),
      holder_(std::make_shared<endpoint>(cache_.sim_dir())) {}

std::unique_ptr<platform::grant_mapping> sim_grant_table::map(domid granter,
                                                              std::span<const grant_ref> refs,
                                                              bool writable, std::error_code& ec) {
  ec.clear();
  if (refs.empty() || refs.size() > max_map_pages) {
    ec = {EINVAL, std::generic_category()};
    return nullptr;
  }
  auto mem = cache_.get(granter, ec);
  if (!mem) {
    return nullptr;
  }
  const auto mode = writable ? detail::access_mode::write : detail::access_mode::read;
  std::vector<pinned> pins;
  std::vector<std::uint32_t> frames;
  for (const grant_ref ref : refs) {
    grant_entry* e = mem->grant(ref.value());
    const auto pin = e == nullptr
                         ? detail::pin_result{{GNTST_bad_gntref, 0}, 0}
                         : detail::pin_for_map(*e, mem->map_records(), ref.value(), self_, mode,
                                               mem->header().page_count, holder_->id());
    if (pin.check.status != GNTST_okay) {
      unpin_all(*mem, pins);
      ec = {map_errno(pin.check.status), std::generic_category()};
      return nullptr;
    }
    pins.push_back({ref.value(), pin.record});
    frames.push_back(pin.check.frame);
  }
  void* addr = map_frames(*mem, frames, writable, ec);
  if (addr == nullptr) {
    unpin_all(*mem, pins);
    return nullptr;
  }
  return std::make_unique<sim_grant_mapping>(addr, frames.size(), std::move(mem), std::move(pins),
                                             holder_);
}

sim_grant_table::resolved sim_grant_table::resolve(std::uint32_t ref, std::uint16_t offset,
                                                   std::uint16_t domid_value, std::uint16_t len,
                                                   detail::access_mode mode) {
  // Foreign side: offset + len must stay inside one page (xengnttab.h).
  if (static_cast<std::size_t>(offset) + len > page_size) {
    return {GNTST_bad_copy_arg, nullptr, nullptr};
  }
  std::error_code ec;
  auto mem = cache_.get(domid{domid_value}, ec);
  if (!mem) {
    return {GNTST_bad_domain, nullptr, nullptr};
  }
  grant_entry* e = mem->grant(ref);
  if (e == nullptr) {
    return {GNTST_bad_gntref, nullptr, nullptr};
  }
  const auto check = detail::check_entry(*e, self_, mode, mem->header().page_count);
  if (check.status != GNTST_okay) {
    return {check.status, nullptr, nullptr};
  }
  return {GNTST_okay, mem->page(check.frame) + offset, std::move(mem)};
}

std::int16_t sim_grant_table::copy_one(platform::grant_copy_segment& seg) {
  if ((seg.flags & ~(GNTCOPY_source_gref | GNTCOPY_dest_gref)) != 0) {
    return GNTST_bad_copy_arg;
  }
  resolved src{GNTST_okay, static_cast<std::byte*>(seg.source.virt), nullptr};
  if ((seg.flags & GNTCOPY_source_gref) != 0) {
    const auto& f = seg.source.foreign;
    src = resolve(f.ref, f.offset, f.domid, seg.len, detail::access_mode::read);
  }
  if (src.status != GNTST_okay) {
    return src.status;
  }
  resolved dst{GNTST_okay, static_cast<std::byte*>(seg.dest.virt), nullptr};
  if ((seg.flags & GNTCOPY_dest_gref) != 0) {
    const auto& f = seg.dest.foreign;
    dst = resolve(f.ref, f.offset, f.domid, seg.len, detail::access_mode::write);
  }
  if (dst.status != GNTST_okay) {
    return dst.status;
  }
  if (src.ptr == nullptr || dst.ptr == nullptr) {
    return GNTST_bad_virt_addr;
  }
  // The guest may scribble on its page meanwhile: we only ever copy bytes out
  // (or in); the caller validates its private copy.
  std::memmove(dst.ptr, src.ptr, seg.len);
  return GNTST_okay;
}

bool sim_grant_table::copy(std::span<platform::grant_copy_segment> batch) {
  for (platform::grant_copy_segment& seg : batch) {
    seg.status = copy_one(seg);
  }
  return true;
}

}  // namespace unetback::sim
