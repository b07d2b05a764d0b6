#include "unetback/control/vif_status.hpp"

namespace unetback::control {

std::string vif_status::disabled_reason() const {
  if (disabled_by) {
    return *disabled_by;
  }
  if (failure) {
    return std::string(to_string(failure->kind)) + " fault: " + failure->message;
  }
  return {};
}

}  // namespace unetback::control
