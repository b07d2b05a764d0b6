#pragma once
// A guest's event-channel handle in the sim (like the guest kernel's
// evtchn calls): offer ports to a backend domain, kick them, and receive the
// backend's kicks through a pollable fd with pending()/unmask() semantics
// identical to the backend's (port_events.hpp). Not thread-safe: one per thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "unetback/rings/ids.hpp"

namespace unetback::sim {

class guest_domain;
class endpoint;
struct endpoint_address;
namespace detail {
class event_receiver;
}

class guest_event_channel {
 public:
  explicit guest_event_channel(guest_domain& domain);
  /// Closes every port this handle still owns.
  ~guest_event_channel();
  guest_event_channel(const guest_event_channel&) = delete;
  guest_event_channel& operator=(const guest_event_channel&) = delete;

  /// Allocates a port that only `remote` may bind (EVTCHNOP_alloc_unbound).
  /// Throws std::runtime_error when the port table is full.
  evtchn_port alloc_unbound(domid remote);
  /// Kicks the binder of `port`; dropped while unbound. If the binder is
  /// found dead, the port becomes unbound again.
  void notify(evtchn_port port);
  /// Closes `port` (EVTCHNOP_close): the binder's end becomes useless.
  void close(evtchn_port port);
  /// True while a (live or not yet reaped) backend has `port` bound.
  [[nodiscard]] bool bound(evtchn_port port) const;

  /// Readable when a kick may be pending.
  [[nodiscard]] int fd() const;
  /// The next pending port (now masked), or nullopt. Never blocks.
  std::optional<evtchn_port> pending();
  /// Re-enables delivery; a kick latched while masked is delivered again.
  void unmask(evtchn_port port);

 private:
  struct owned_port {
    std::uint32_t port;
    std::uint64_t binder;  // cached address is for this binder id
    std::unique_ptr<endpoint_address> address;
  };
  owned_port* find(std::uint32_t port);

  guest_domain& domain_;
  std::unique_ptr<endpoint> ep_;
  std::unique_ptr<detail::event_receiver> rx_;
  std::vector<owned_port> ports_;
};

}  // namespace unetback::sim
