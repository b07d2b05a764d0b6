#pragma once
// sim_event_channel: the platform::event_channel of the simulated hypervisor.

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "domain_cache.hpp"
#include "port_events.hpp"
#include "unetback/platform/event_channel.hpp"
#include "unetback/sim/endpoint.hpp"

namespace unetback::sim {

class sim_event_channel final : public platform::event_channel {
 public:
  sim_event_channel(std::filesystem::path sim_dir, domid self);
  /// Unbinds every port still bound (the guest's ports become unbound).
  ~sim_event_channel() override;
  sim_event_channel(const sim_event_channel&) = delete;
  sim_event_channel& operator=(const sim_event_channel&) = delete;

  evtchn_port bind_interdomain(domid remote, evtchn_port remote_port, std::error_code& ec) override;
  void unbind(evtchn_port local) override;
  void notify(evtchn_port local) override;
  [[nodiscard]] int fd() const override { return ep_.fd(); }
  std::optional<evtchn_port> pending() override;
  void unmask(evtchn_port local) override;

 private:
  struct binding {
    evtchn_port local;
    domid remote;
    std::uint32_t remote_port;
    std::shared_ptr<guest_memory> mem;
    port_entry* entry;
    endpoint_address guest;  // the guest's endpoint, copied once at bind time
  };
  std::optional<std::uint32_t> claim(port_entry& e, std::error_code& ec);
  [[nodiscard]] bool still_ours(const binding& b) const;
  binding* find(evtchn_port local);

  domain_cache cache_;
  domid self_;
  endpoint ep_;
  detail::event_receiver rx_;
  std::vector<binding> bindings_;
};

}  // namespace unetback::sim
