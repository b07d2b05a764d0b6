#pragma once
// frontend_memory inside a real Xen domU: pages shared through the guest
// kernel's gntalloc device (libxengnttab's xengntshr_*) and ports through its
// evtchn device (libxenevtchn). gntalloc cannot revoke a grant and re-grant
// the same page, so slot buffers stay granted for the page's life: the
// per-packet revocation check of the sim platform does not exist here.

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "unetback/sim/netfront/frontend_memory.hpp"

struct xengntdev_handle;

namespace unetback::sim {

class xen_frontend_memory final : public frontend_memory {
 public:
  /// Opens /dev/xen/gntalloc for at most `page_limit` pages shared at once.
  /// Throws std::system_error.
  xen_frontend_memory(domid self, std::uint32_t page_limit);
  /// Unshares every page still shared (gntalloc ends each grant once the
  /// backend has unmapped it).
  ~xen_frontend_memory() override;
  xen_frontend_memory(const xen_frontend_memory&) = delete;
  xen_frontend_memory& operator=(const xen_frontend_memory&) = delete;

  shared_page share_page(domid grantee, grant_mode mode) override;
  shared_page claim_slot(domid grantee, grant_mode mode) override;
  void grant_slot(const shared_page& p) override;
  std::error_code end_slot(const shared_page& p) override;
  std::error_code release(const shared_page& p) override;
  [[nodiscard]] std::span<std::byte, rings::page_size> memory(const shared_page& p) const override;
  std::unique_ptr<frontend_events> open_events() override;

 private:
  domid self_;
  xengntdev_handle* gntshr_ = nullptr;
  // By page index, sized once: workers read their pages while the control
  // thread shares more (the control ring's key and mapping pages).
  std::vector<std::byte*> pages_;
  std::mutex mutex_;  // guards free_indices_ (share and release)
  std::vector<std::uint32_t> free_indices_;
};

}  // namespace unetback::sim
