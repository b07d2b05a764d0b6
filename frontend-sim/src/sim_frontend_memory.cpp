#include "unetback/sim/netfront/sim_frontend_memory.hpp"

#include "unetback/sim/guest_event_channel.hpp"

namespace unetback::sim {
namespace {

class sim_frontend_events final : public frontend_events {
 public:
  explicit sim_frontend_events(guest_domain& domain) : ev_(domain.open_event_channel()) {}

  evtchn_port alloc_unbound(domid remote) override { return ev_->alloc_unbound(remote); }
  void notify(evtchn_port port) override { ev_->notify(port); }
  void close(evtchn_port port) override { ev_->close(port); }
  [[nodiscard]] int fd() const override { return ev_->fd(); }
  std::optional<evtchn_port> pending() override { return ev_->pending(); }
  void unmask(evtchn_port port) override { ev_->unmask(port); }

 private:
  std::unique_ptr<guest_event_channel> ev_;
};

}  // namespace

shared_page sim_frontend_memory::share_page(domid grantee, grant_mode mode) {
  const std::uint32_t page = domain_.alloc_page();
  return shared_page{page, domain_.grant_access(page, grantee, mode), grantee, mode};
}

shared_page sim_frontend_memory::claim_slot(domid grantee, grant_mode mode) {
  const std::uint32_t page = domain_.alloc_page();
  return shared_page{page, domain_.claim_ref(), grantee, mode};
}

void sim_frontend_memory::grant_slot(const shared_page& p) {
  domain_.grant_access_ref(p.ref, p.page, p.grantee, p.mode);
}

std::error_code sim_frontend_memory::end_slot(const shared_page& p) {
  return domain_.end_access_ref(p.ref);
}

std::error_code sim_frontend_memory::release(const shared_page& p) {
  // end_access ends a granted ref and releases it; a claimed, ungranted slot
  // ref ends at once.
  const std::error_code ec = domain_.end_access(p.ref);
  if (!ec) {
    domain_.free_page(p.page);
  }
  return ec;
}

std::span<std::byte, rings::page_size> sim_frontend_memory::memory(const shared_page& p) const {
  return domain_.page(p.page);
}

std::unique_ptr<frontend_events> sim_frontend_memory::open_events() {
  return std::make_unique<sim_frontend_events>(domain_);
}

}  // namespace unetback::sim
