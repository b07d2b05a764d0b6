#pragma once
// Frontend personalities: netfront-sim behaving like the guests operators run
// (docs/xl.md, "Guests"), so that one tool tests the backend against each:
//   linux   Linux xen-netfront (the default): SG, GSO, checksum offload
//   xenvif  Windows XenVif/XenNet: 4 queues, split event channels, a control
//           ring with a Toeplitz configuration, multicast control turned off
//           and on again (NDIS all-multicast) without re-sending the list
//   gplpv   GPLPV and old netfronts: 1 queue, TSO frames of up to 19 slots
//           (Windows buffers smaller than a page)
//   minios  Mini-OS and unikernels: 1 queue, no SG, no GSO, no checksum
//           offload in either direction

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "unetback/sim/netfront/frontend_keys.hpp"

namespace unetback::sim {

enum class personality : std::uint8_t { linux_netfront, xenvif, gplpv, minios };

/// The command-line names, in enum order.
[[nodiscard]] std::span<const std::string_view> personality_names();
[[nodiscard]] std::optional<personality> parse_personality(std::string_view name);
[[nodiscard]] std::string_view to_string(personality p);

/// What a frontend of that kind does; explicit options override it.
struct personality_profile {
  frontend_request request;
  /// Period of request-multicast-control's off/on toggle in ms (0: never).
  std::uint32_t multicast_toggle_ms = 0;
};

[[nodiscard]] personality_profile profile_of(personality p);

}  // namespace unetback::sim
