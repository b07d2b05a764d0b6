#include "sim_event_channel.hpp"

#include <atomic>
#include <cerrno>

#include "cas_limits.hpp"
#include "errno_code.hpp"

namespace unetback::sim {
namespace {

/// Local port numbers are unique within the process (port 0 is invalid).
evtchn_port next_local_port() {
  static std::atomic<std::uint32_t> next{1};
  return evtchn_port{next.fetch_add(1, std::memory_order_relaxed)};
}

}  // namespace

sim_event_channel::sim_event_channel(std::filesystem::path sim_dir, domid self)
    : cache_(std::move(sim_dir)), self_(self), ep_(cache_.sim_dir()), rx_(ep_) {}

sim_event_channel::~sim_event_channel() {
  while (!bindings_.empty()) {
    unbind(bindings_.back().local);
  }
}

// Takes the port into state `changing` for us: an unbound port offered to our
// domain, or a bound one whose binder is dead (Xen unbinds the remote end when
// the binder closes /dev/xen/evtchn). Returns the claimed state word.
std::optional<std::uint32_t> sim_event_channel::claim(port_entry& e, std::error_code& ec) {
  ec.clear();
  for (int attempt = 0; attempt < max_cas_attempts; ++attempt) {
    std::uint32_t w = shared(e.state).load(std::memory_order_acquire);
    if (shared(e.remote_domid).load() != self_.value()) {
      ec = errc(EINVAL);  // not offered to us
      return std::nullopt;
    }
    const port_state st = port_word_state(w);
    std::uint64_t dead_binder = 0;
    if (st == port_state::bound) {
      dead_binder = shared(e.binder_endpoint).load();
      if (endpoint::alive(cache_.sim_dir(), dead_binder)) {
        ec = errc(EINVAL);  // already bound (Xen: -EINVAL, not ECS_UNBOUND)
        return std::nullopt;
      }
    } else if (st != port_state::unbound) {
      ec = errc(EINVAL);
      return std::nullopt;
    }
    const std::uint32_t next = port_word_next(w, port_state::changing);
    if (shared(e.state).compare_exchange_strong(w, next)) {
      endpoint::remove_stale(cache_.sim_dir(), dead_binder);
      return next;
    }
  }
  ec = errc(EAGAIN);
  return std::nullopt;
}

evtchn_port sim_event_channel::bind_interdomain(domid remote, evtchn_port remote_port,
                                                std::error_code& ec) {
  ec.clear();
  auto mem = cache_.get(remote, ec);
  if (!mem) {
    return evtchn_port{};
  }
  port_entry* e = mem->port(remote_port.value());
  if (e == nullptr) {
    ec = errc(EINVAL);
    return evtchn_port{};
  }
  const auto word = claim(*e, ec);
  if (!word) {
    return evtchn_port{};
  }
  const evtchn_port local = next_local_port();
  shared(e->binder_endpoint).store(ep_.id());
  shared(e->binder_port).store(local.value());
  shared(e->binder_domid).store(self_.value());
  shared(e->pending_to_backend).store(0);
  shared(e->masked_backend).store(0);
  const auto guest = endpoint::address_of(cache_.sim_dir(), shared(e->owner_endpoint).load());
  shared(e->state).store(port_word_next(*word, port_state::bound), std::memory_order_release);
  bindings_.push_back(
      binding{local, remote, remote_port.value(), mem, e, guest.value_or(endpoint_address{})});
  rx_.add(local.value(), detail::latch_of(*e, detail::direction::to_backend));
  return local;
}

bool sim_event_channel::still_ours(const binding& b) const {
  const std::uint32_t w = shared(b.entry->state).load(std::memory_order_acquire);
  return port_word_state(w) == port_state::bound &&
         shared(b.entry->binder_endpoint).load() == ep_.id() &&
         shared(b.entry->binder_port).load() == b.local.value();
}

sim_event_channel::binding* sim_event_channel::find(evtchn_port local) {
  for (binding& b : bindings_) {
    if (b.local == local) {
      return &b;
    }
  }
  return nullptr;
}

void sim_event_channel::unbind(evtchn_port local) {
  binding* b = find(local);
  if (b == nullptr) {
    return;
  }
  rx_.remove(local.value());
  for (int attempt = 0; attempt < max_cas_attempts && still_ours(*b); ++attempt) {
    std::uint32_t w = shared(b->entry->state).load();
    if (shared(b->entry->state)
            .compare_exchange_strong(w, port_word_next(w, port_state::unbound))) {
      break;
    }
  }
  std::erase_if(bindings_, [local](const binding& x) { return x.local == local; });
}

void sim_event_channel::notify(evtchn_port local) {
  binding* b = find(local);
  // A port the guest closed (or gave to another binder) is unbound on our
  // side: Xen drops the notification silently.
  if (b == nullptr || b->guest.len == 0 || !still_ours(*b)) {
    return;
  }
  (void)detail::raise_event(ep_, detail::latch_of(*b->entry, detail::direction::to_guest), b->guest,
                            b->remote_port);
}

std::optional<evtchn_port> sim_event_channel::pending() {
  const auto port = rx_.pending();
  if (!port) {
    return std::nullopt;
  }
  return evtchn_port{*port};
}

void sim_event_channel::unmask(evtchn_port local) {
  rx_.unmask(local.value());
}

}  // namespace unetback::sim
