#pragma once
// The event-channel seam (xenevtchn.h semantics): interdomain binding, kicks,
// and a pollable fd whose pending ports are masked until unmasked.

#include <cstddef>
#include <optional>
#include <span>
#include <system_error>

#include "unetback/rings/ids.hpp"

namespace unetback::platform {

/// An event-channel handle. Not thread-safe ("a handle must not be shared by
/// several threads", xenevtchn.h): each queue worker owns one.
class event_channel {
 public:
  virtual ~event_channel() = default;

  /// Binds to `remote_port`, which `remote` allocated unbound for our domain.
  /// Fails (ec set) if the port was not offered to us or is already bound.
  virtual evtchn_port bind_interdomain(domid remote, evtchn_port remote_port,
                                       std::error_code& ec) = 0;
  /// Allocates a port that only `remote` may bind, bound to this handle
  /// (xenevtchn_bind_unbound_port): the frontend's side of a channel. The
  /// backend never offers ports, so a platform may leave it unsupported.
  virtual evtchn_port alloc_unbound(domid remote, std::error_code& ec) {
    (void)remote;
    ec = std::make_error_code(std::errc::operation_not_supported);
    return evtchn_port{};
  }
  /// Closes our end; the remote port becomes unbound and can be bound again.
  virtual void unbind(evtchn_port local) = 0;
  /// Kicks the remote end of `local`.
  virtual void notify(evtchn_port local) = 0;
  /// A file descriptor that polls readable when a port may be pending.
  [[nodiscard]] virtual int fd() const = 0;
  /// The next pending port (now masked), or nullopt if none. Never blocks.
  virtual std::optional<evtchn_port> pending() = 0;
  /// Re-enables delivery for `local`; an event latched while masked is
  /// delivered again after this call.
  virtual void unmask(evtchn_port local) = 0;

  /// Takes up to out.size() pending ports (each now masked); returns how many.
  /// Never blocks. A platform overrides it where one call can take several.
  virtual std::size_t take_pending(std::span<evtchn_port> out) {
    std::size_t n = 0;
    while (n < out.size()) {
      const auto p = pending();
      if (!p) {
        break;
      }
      out[n++] = *p;
    }
    return n;
  }
  /// Unmasks every port of `ports`, as unmask() does one.
  virtual void unmask_all(std::span<const evtchn_port> ports) {
    for (const evtchn_port p : ports) {
      unmask(p);
    }
  }
};

}  // namespace unetback::platform
