#include "unetback/sim/netfront/xen_frontend_memory.hpp"

extern "C" {
#include <xengnttab.h>
}

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "unetback/platform/xen/xen_platform.hpp"

namespace unetback::sim {
namespace {

/// The guest's ports over the Xen platform's event channel (libxenevtchn).
class xen_frontend_events final : public frontend_events {
 public:
  explicit xen_frontend_events(domid self)
      : ev_(platform::xen_platform(self).open_event_channel()) {}

  evtchn_port alloc_unbound(domid remote) override {
    std::error_code ec;
    const evtchn_port p = ev_->alloc_unbound(remote, ec);
    if (ec) {
      throw std::system_error(
          ec, "xenevtchn_bind_unbound_port(" + std::to_string(remote.value()) + ")");
    }
    return p;
  }
  void notify(evtchn_port port) override { ev_->notify(port); }
  void close(evtchn_port port) override { ev_->unbind(port); }
  [[nodiscard]] int fd() const override { return ev_->fd(); }
  std::optional<evtchn_port> pending() override { return ev_->pending(); }
  void unmask(evtchn_port port) override { ev_->unmask(port); }

 private:
  std::unique_ptr<platform::event_channel> ev_;
};

}  // namespace

xen_frontend_memory::xen_frontend_memory(domid self, std::uint32_t page_limit)
    : self_(self), gntshr_(xengntshr_open(nullptr, 0)), pages_(page_limit, nullptr) {
  if (gntshr_ == nullptr) {
    throw std::system_error(errno, std::generic_category(),
                            "xengntshr_open (is xen-gntalloc loaded?)");
  }
  for (std::uint32_t i = page_limit; i > 0; --i) {
    free_indices_.push_back(i - 1);
  }
}

xen_frontend_memory::~xen_frontend_memory() {
  for (std::byte* p : pages_) {
    if (p != nullptr) {
      xengntshr_unshare(gntshr_, p, 1);
    }
  }
  xengntshr_close(gntshr_);
}

shared_page xen_frontend_memory::share_page(domid grantee, grant_mode mode) {
  std::uint32_t ref = 0;
  void* mem = xengntshr_share_pages(gntshr_, grantee.value(), 1, &ref,
                                    mode == grant_mode::read_write ? 1 : 0);
  if (mem == nullptr) {
    throw std::system_error(errno, std::generic_category(),
                            "xengntshr_share_pages (gntalloc's limit= too low?)");
  }
  auto* page = static_cast<std::byte*>(mem);
  std::memset(page, 0, rings::page_size);
  const std::lock_guard lock(mutex_);
  if (free_indices_.empty()) {
    xengntshr_unshare(gntshr_, page, 1);
    throw std::runtime_error("xen_frontend_memory: all " + std::to_string(pages_.size()) +
                             " pages are shared");
  }
  const std::uint32_t index = free_indices_.back();
  free_indices_.pop_back();
  pages_[index] = page;
  return shared_page{index, grant_ref{ref}, grantee, mode};
}

shared_page xen_frontend_memory::claim_slot(domid grantee, grant_mode mode) {
  return share_page(grantee, mode);
}

void xen_frontend_memory::grant_slot(const shared_page& p) {
  (void)p;  // granted since claim_slot()
}

std::error_code xen_frontend_memory::end_slot(const shared_page& p) {
  (void)p;  // stays granted until release()
  return {};
}

std::error_code xen_frontend_memory::release(const shared_page& p) {
  std::byte*& page = pages_.at(p.page);
  if (page == nullptr) {
    return {EINVAL, std::generic_category()};
  }
  if (xengntshr_unshare(gntshr_, page, 1) != 0) {
    return {errno, std::generic_category()};
  }
  page = nullptr;
  const std::lock_guard lock(mutex_);
  free_indices_.push_back(p.page);
  return {};
}

std::span<std::byte, rings::page_size> xen_frontend_memory::memory(const shared_page& p) const {
  std::byte* page = pages_.at(p.page);
  if (page == nullptr) {
    throw std::out_of_range("xen_frontend_memory: page " + std::to_string(p.page) + " is released");
  }
  return std::span<std::byte, rings::page_size>(page, rings::page_size);
}

std::unique_ptr<frontend_events> xen_frontend_memory::open_events() {
  return std::make_unique<xen_frontend_events>(self_);
}

}  // namespace unetback::sim
