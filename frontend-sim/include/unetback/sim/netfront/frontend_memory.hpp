#pragma once
// What netfront needs from its domain: pages granted to the backend (rings and
// slot buffers) and event-channel ports offered to it. Two implementations:
// the sim platform's domain (sim_frontend_memory.hpp) and a real Xen domU's
// gntalloc and evtchn devices (xen_frontend_memory.hpp).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <system_error>

#include "unetback/rings/ids.hpp"
#include "unetback/rings/shared_ring.hpp"
#include "unetback/sim/guest_domain.hpp"

namespace unetback::sim {

/// A guest page and the grant ref that shares it with one backend domain.
struct shared_page {
  std::uint32_t page = 0;  ///< the implementation's index of the page
  grant_ref ref;
  domid grantee;
  grant_mode mode = grant_mode::read_write;
};

/// The guest's event-channel handle (one per thread).
class frontend_events {
 public:
  virtual ~frontend_events() = default;
  /// A port that only `remote` may bind (EVTCHNOP_alloc_unbound). Throws.
  virtual evtchn_port alloc_unbound(domid remote) = 0;
  /// Kicks the backend's end of `port`.
  virtual void notify(evtchn_port port) = 0;
  /// Closes `port` (EVTCHNOP_close).
  virtual void close(evtchn_port port) = 0;
  /// Readable when a kick may be pending.
  [[nodiscard]] virtual int fd() const = 0;
  /// The next pending port (now masked), or nullopt. Never blocks.
  virtual std::optional<evtchn_port> pending() = 0;
  /// Re-enables delivery; a kick latched while masked is delivered again.
  virtual void unmask(evtchn_port port) = 0;
};

class frontend_memory {
 public:
  virtual ~frontend_memory() = default;
  /// A zeroed page granted to `grantee` until release() (a ring page).
  /// Throws when the domain has no page or grant left.
  virtual shared_page share_page(domid grantee, grant_mode mode) = 0;
  /// A zeroed slot buffer whose ref is granted only between grant_slot() and
  /// end_slot(), as Linux's netfront grants a buffer per packet. Where the
  /// platform cannot revoke per packet (gntalloc), it stays granted for life.
  virtual shared_page claim_slot(domid grantee, grant_mode mode) = 0;
  virtual void grant_slot(const shared_page& p) = 0;
  /// Ends a slot's grant, keeping its ref; EBUSY while the backend maps it.
  virtual std::error_code end_slot(const shared_page& p) = 0;
  /// Ends the grant and frees the page. EBUSY while the backend maps it: the
  /// page and its ref are then left allocated (Linux defers the same way).
  virtual std::error_code release(const shared_page& p) = 0;
  /// The page's memory, as this process maps it.
  [[nodiscard]] virtual std::span<std::byte, rings::page_size> memory(
      const shared_page& p) const = 0;
  /// A new event-channel handle (one per thread).
  virtual std::unique_ptr<frontend_events> open_events() = 0;
};

}  // namespace unetback::sim
