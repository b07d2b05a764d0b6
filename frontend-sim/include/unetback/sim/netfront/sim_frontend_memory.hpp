#pragma once
// frontend_memory over the sim platform's domain (guest_domain.hpp): slot
// buffers are granted and revoked per packet, so a backend that keeps a
// grant mapped is caught (end_slot() answers EBUSY).

#include "unetback/sim/guest_domain.hpp"
#include "unetback/sim/netfront/frontend_memory.hpp"

namespace unetback::sim {

class sim_frontend_memory final : public frontend_memory {
 public:
  explicit sim_frontend_memory(guest_domain& domain) : domain_(domain) {}

  shared_page share_page(domid grantee, grant_mode mode) override;
  shared_page claim_slot(domid grantee, grant_mode mode) override;
  void grant_slot(const shared_page& p) override;
  std::error_code end_slot(const shared_page& p) override;
  std::error_code release(const shared_page& p) override;
  [[nodiscard]] std::span<std::byte, rings::page_size> memory(const shared_page& p) const override;
  std::unique_ptr<frontend_events> open_events() override;

  /// The simulated domain itself, for the hostile hooks that write grant
  /// entries and event-channel ports directly.
  [[nodiscard]] guest_domain& domain() { return domain_; }

 private:
  guest_domain& domain_;
};

}  // namespace unetback::sim
