#pragma once
// XenbusState (xen/io/xenbus.h), written to XenStore as decimal strings.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace unetback::control {

/// enum xenbus_state from xen/io/xenbus.h.
enum class xenbus_state : std::uint8_t {
  unknown = 0,        ///< node absent or unreadable
  initialising = 1,   ///< just created
  init_wait = 2,      ///< backend: early init done, waiting for frontend/hotplug
  initialised = 3,    ///< frontend: rings set up (netfront skips it)
  connected = 4,      ///< running
  closing = 5,        ///< shutting down (error or unplug)
  closed = 6,         ///< done
  reconfiguring = 7,  ///< netfront: renegotiating xdp-headroom
  reconfigured = 8,   ///< backend's answer to reconfiguring
};

/// Reads a state node's value: "0".."8" exactly; anything else (absent,
/// junk, out of range) is xenbus_state::unknown.
[[nodiscard]] xenbus_state parse_xenbus_state(const std::optional<std::string>& value);

/// The decimal form written to XenStore ("4").
[[nodiscard]] std::string to_wire(xenbus_state s);

/// The name, for logs ("Connected").
[[nodiscard]] std::string_view name_of(xenbus_state s);

}  // namespace unetback::control
