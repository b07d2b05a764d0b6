#include "unetback/control/xenbus_state.hpp"

#include <array>

namespace unetback::control {

xenbus_state parse_xenbus_state(const std::optional<std::string>& value) {
  if (!value || value->size() != 1 || (*value)[0] < '0' || (*value)[0] > '8') {
    return xenbus_state::unknown;
  }
  return static_cast<xenbus_state>((*value)[0] - '0');
}

std::string to_wire(xenbus_state s) {
  return std::to_string(static_cast<unsigned>(s));
}

std::string_view name_of(xenbus_state s) {
  static constexpr std::array<std::string_view, 9> names = {
      "Unknown", "Initialising", "InitWait",      "Initialised", "Connected",
      "Closing", "Closed",       "Reconfiguring", "Reconfigured"};
  const auto i = static_cast<std::size_t>(s);
  return i < names.size() ? names[i] : "Invalid";
}

}  // namespace unetback::control
