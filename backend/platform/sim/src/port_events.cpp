#include "port_events.hpp"

#include <algorithm>

namespace unetback::sim::detail {

void event_receiver::add(std::uint32_t local_port, latch l) {
  remove(local_port);
  slots_.push_back(slot{local_port, l, false});
}

void event_receiver::remove(std::uint32_t local_port) {
  std::erase_if(slots_, [local_port](const slot& s) { return s.port == local_port; });
}

bool event_receiver::claimable(const slot& s) const {
  return !s.masked && shared(*s.l.pending).load() != 0;
}

bool event_receiver::claim(slot& s) {
  if (!claimable(s) || shared(*s.l.pending).exchange(0) == 0) {
    return false;
  }
  s.masked = true;
  shared(*s.l.masked).store(1);
  return true;
}

std::optional<std::uint32_t> event_receiver::pending() {
  const std::optional<std::uint32_t> hint = ep_.receive();
  const std::size_t n = slots_.size();
  if (n == 0) {
    return std::nullopt;
  }
  std::size_t start = cursor_ % n;
  if (hint) {
    for (std::size_t i = 0; i < n; ++i) {
      if (slots_[i].port == *hint) {
        start = i;
      }
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    slot& s = slots_[(start + k) % n];
    if (!claim(s)) {
      continue;
    }
    cursor_ = (start + k + 1) % n;
    const auto more =
        std::find_if(slots_.begin(), slots_.end(), [this](const slot& o) { return claimable(o); });
    if (more != slots_.end()) {
      (void)ep_.send_doorbell(ep_.self_address(), more->port);
    }
    return s.port;
  }
  return std::nullopt;
}

void event_receiver::unmask(std::uint32_t local_port) {
  for (slot& s : slots_) {
    if (s.port != local_port) {
      continue;
    }
    s.masked = false;
    shared(*s.l.masked).store(0);
    if (shared(*s.l.pending).load() != 0) {
      (void)ep_.send_doorbell(ep_.self_address(), s.port);
    }
    return;
  }
}

}  // namespace unetback::sim::detail
