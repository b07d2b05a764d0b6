#include "unetback/sim/netfront/personality.hpp"

#include <array>

#include "unetback/sim/netfront/tx_slots.hpp"

namespace unetback::sim {
namespace {

constexpr std::array<std::string_view, 4> known_personalities{"linux", "xenvif", "gplpv", "minios"};

}  // namespace

std::span<const std::string_view> personality_names() {
  return known_personalities;
}

std::optional<personality> parse_personality(std::string_view name) {
  for (std::size_t i = 0; i < known_personalities.size(); ++i) {
    if (known_personalities[i] == name) {
      return static_cast<personality>(i);
    }
  }
  return std::nullopt;
}

std::string_view to_string(personality p) {
  return known_personalities.at(static_cast<std::size_t>(p));
}

personality_profile profile_of(personality p) {
  personality_profile profile;
  frontend_request& r = profile.request;
  switch (p) {
    case personality::linux_netfront:
      break;
    case personality::xenvif:
      r.queues = 4;
      r.split_event_channels = true;
      r.ctrl_ring = true;
      r.multicast_control = true;
      profile.multicast_toggle_ms = 1000;
      break;
    case personality::gplpv:
      r.tx_slot_bytes = min_tx_slot_bytes;
      break;
    case personality::minios:
      r.sg = false;
      r.gso = false;
      r.ipv6_csum_offload = false;
      r.no_csum_offload = true;
      break;
  }
  return profile;
}

}  // namespace unetback::sim
