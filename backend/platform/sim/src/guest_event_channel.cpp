#include "unetback/sim/guest_event_channel.hpp"

#include <algorithm>
#include <cerrno>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "cas_limits.hpp"
#include "port_events.hpp"
#include "unetback/sim/endpoint.hpp"
#include "unetback/sim/guest_domain.hpp"

namespace unetback::sim {
namespace {

/// Moves a port's state word to `changing` if it is in state `from`;
/// returns the new word.
std::optional<std::uint32_t> take(port_entry& e, port_state from) {
  std::uint32_t word = shared(e.state).load(std::memory_order_acquire);
  if (port_word_state(word) != from) {
    return std::nullopt;
  }
  const std::uint32_t next = port_word_next(word, port_state::changing);
  if (!shared(e.state).compare_exchange_strong(word, next)) {
    return std::nullopt;
  }
  return next;
}

void clear_binder(port_entry& e) {
  shared(e.binder_endpoint).store(0);
  shared(e.binder_port).store(0);
  shared(e.binder_domid).store(0);
  shared(e.pending_to_backend).store(0);
  shared(e.masked_backend).store(0);
}

}  // namespace

guest_event_channel::guest_event_channel(guest_domain& domain)
    : domain_(domain),
      ep_(std::make_unique<endpoint>(domain.sim_dir())),
      rx_(std::make_unique<detail::event_receiver>(*ep_)) {}

guest_event_channel::~guest_event_channel() {
  while (!ports_.empty()) {
    close(evtchn_port{ports_.back().port});
  }
}

int guest_event_channel::fd() const {
  return ep_->fd();
}

evtchn_port guest_event_channel::alloc_unbound(domid remote) {
  for (std::uint32_t p = 1;; ++p) {
    port_entry* e = nullptr;
    try {
      e = &domain_.raw_port(p);
    } catch (const std::out_of_range&) {
      throw std::runtime_error(
          fmt::format("dom{}: no free event-channel port", domain_.id().value()));
    }
    const auto word = take(*e, port_state::free);
    if (!word) {
      continue;
    }
    clear_binder(*e);
    shared(e->remote_domid).store(remote.value());
    shared(e->owner_endpoint).store(ep_->id());
    shared(e->pending_to_guest).store(0);
    shared(e->masked_guest).store(0);
    shared(e->state).store(port_word_next(*word, port_state::unbound), std::memory_order_release);
    ports_.push_back(owned_port{p, 0, nullptr});
    rx_->add(p, detail::latch_of(*e, detail::direction::to_guest));
    return evtchn_port{p};
  }
}

guest_event_channel::owned_port* guest_event_channel::find(std::uint32_t port) {
  const auto it = std::find_if(ports_.begin(), ports_.end(),
                               [port](const owned_port& o) { return o.port == port; });
  return it == ports_.end() ? nullptr : &*it;
}

void guest_event_channel::notify(evtchn_port port) {
  owned_port* o = find(port.value());
  if (o == nullptr) {
    return;
  }
  port_entry& e = domain_.raw_port(port.value());
  std::uint32_t word = shared(e.state).load(std::memory_order_acquire);
  if (port_word_state(word) != port_state::bound) {
    return;  // unbound: Xen drops the kick
  }
  const std::uint64_t binder = shared(e.binder_endpoint).load();
  if (o->binder != binder || !o->address) {
    auto address = endpoint::address_of(domain_.sim_dir(), binder);
    o->address = address ? std::make_unique<endpoint_address>(*address) : nullptr;
    o->binder = binder;
  }
  if (!o->address) {
    return;
  }
  const std::error_code ec =
      detail::raise_event(*ep_, detail::latch_of(e, detail::direction::to_backend), *o->address,
                          shared(e.binder_port).load());
  if (ec == std::errc::connection_refused || ec == std::errc::no_such_file_or_directory) {
    // The binder died: its end is gone, our port is offered again.
    if (shared(e.state).compare_exchange_strong(word, port_word_next(word, port_state::changing))) {
      clear_binder(e);
      shared(e.state).store(
          port_word_next(port_word_next(word, port_state::changing), port_state::unbound),
          std::memory_order_release);
      endpoint::remove_stale(domain_.sim_dir(), binder);
    }
  }
}

void guest_event_channel::close(evtchn_port port) {
  if (find(port.value()) == nullptr) {
    return;
  }
  rx_->remove(port.value());
  std::erase_if(ports_, [port](const owned_port& o) { return o.port == port.value(); });
  port_entry& e = domain_.raw_port(port.value());
  for (int attempt = 0; attempt < max_cas_attempts; ++attempt) {
    std::uint32_t word = shared(e.state).load();
    if (shared(e.state).compare_exchange_strong(word, port_word_next(word, port_state::changing))) {
      clear_binder(e);
      shared(e.remote_domid).store(0);
      shared(e.owner_endpoint).store(0);
      shared(e.state).store(
          port_word_next(port_word_next(word, port_state::changing), port_state::free),
          std::memory_order_release);
      return;
    }
  }
}

bool guest_event_channel::bound(evtchn_port port) const {
  port_entry& e = domain_.raw_port(port.value());
  return port_word_state(shared(e.state).load()) == port_state::bound;
}

std::optional<evtchn_port> guest_event_channel::pending() {
  const auto p = rx_->pending();
  if (!p) {
    return std::nullopt;
  }
  return evtchn_port{*p};
}

void guest_event_channel::unmask(evtchn_port port) {
  rx_->unmask(port.value());
}

}  // namespace unetback::sim
