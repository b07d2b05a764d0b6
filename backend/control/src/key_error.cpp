#include "unetback/control/key_error.hpp"

namespace unetback::control {

std::string key_error::message() const {
  std::string msg = key;
  switch (what) {
    case kind::missing:
      msg += ": missing";
      break;
    case kind::malformed:
      msg += ": malformed";
      break;
    case kind::out_of_range:
      msg += ": out of range";
      break;
    case kind::inconsistent:
      msg += ": inconsistent";
      break;
  }
  if (!detail.empty()) {
    msg += " (" + detail + ")";
  }
  return msg;
}

}  // namespace unetback::control
