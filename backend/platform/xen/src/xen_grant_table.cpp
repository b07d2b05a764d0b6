// grant_table over libxengnttab (xengnttab.h; docs/protocol.md §5.1).
#include <sys/mman.h>
extern "C" {
#include <xengnttab.h>
}

#include <cerrno>
#include <limits>
#include <memory>
#include <system_error>
#include <utility>

#include "unetback/platform/xen/xen_platform.hpp"

namespace unetback::platform {
namespace {

std::error_code last_error() {
  return {errno, std::generic_category()};
}

/// Closes the handle once the table and all its mappings are gone: a mapping
/// must be unmapped through the handle that made it.
using shared_handle = std::shared_ptr<xengnttab_handle>;

class xen_grant_mapping final : public grant_mapping {
 public:
  xen_grant_mapping(shared_handle h, void* addr, std::size_t pages)
      : h_(std::move(h)), addr_(addr), pages_(pages) {}
  ~xen_grant_mapping() override {
    (void)xengnttab_unmap(h_.get(), addr_, static_cast<std::uint32_t>(pages_));
  }
  xen_grant_mapping(const xen_grant_mapping&) = delete;
  xen_grant_mapping& operator=(const xen_grant_mapping&) = delete;
  [[nodiscard]] void* data() const override { return addr_; }
  [[nodiscard]] std::size_t page_count() const override { return pages_; }

 private:
  shared_handle h_;
  void* addr_;
  std::size_t pages_;
};

class xen_grant_table final : public grant_table {
 public:
  explicit xen_grant_table(std::uint32_t max_grants) {
    xengnttab_handle* raw = xengnttab_open(nullptr, 0);
    if (raw == nullptr) {
      throw std::system_error(last_error(), "xengnttab_open");
    }
    h_ = shared_handle(raw, [](xengnttab_handle* p) { xengnttab_close(p); });
    // Must come right after open, before any mapping (xengnttab.h).
    if (xengnttab_set_max_grants(h_.get(), max_grants) != 0) {
      throw std::system_error(last_error(), "xengnttab_set_max_grants");
    }
  }

  std::unique_ptr<grant_mapping> map(domid granter, std::span<const grant_ref> refs, bool writable,
                                     std::error_code& ec) override {
    ec.clear();
    if (refs.empty() || refs.size() > std::numeric_limits<std::uint32_t>::max()) {
      ec = {EINVAL, std::generic_category()};
      return nullptr;
    }
    // grant_ref is a strong type over uint32_t with the same layout.
    static_assert(sizeof(grant_ref) == sizeof(std::uint32_t));
    const auto* raw_refs = reinterpret_cast<const std::uint32_t*>(refs.data());
    const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
    void* addr = xengnttab_map_domain_grant_refs(
        h_.get(), static_cast<std::uint32_t>(refs.size()), granter.value(),
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): read only (xengnttab.h)
        const_cast<std::uint32_t*>(raw_refs), prot);
    if (addr == nullptr) {
      ec = last_error();
      return nullptr;
    }
    return std::make_unique<xen_grant_mapping>(h_, addr, refs.size());
  }

  bool copy(std::span<grant_copy_segment> batch) override {
    if (batch.empty()) {
      return true;
    }
    if (batch.size() > std::numeric_limits<std::uint32_t>::max() ||
        xengnttab_grant_copy(h_.get(), static_cast<std::uint32_t>(batch.size()), batch.data()) !=
            0) {
      for (grant_copy_segment& seg : batch) {
        seg.status = GNTST_general_error;
      }
      return false;
    }
    return true;
  }

 private:
  shared_handle h_;
};

}  // namespace

std::unique_ptr<grant_table> xen_platform::open_grant_table() {
  return std::make_unique<xen_grant_table>(max_grants_);
}

}  // namespace unetback::platform
