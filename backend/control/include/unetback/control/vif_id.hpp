#pragma once
// Which vif: the frontend's domain and the device id N of
// backend/vif/<D>/<N> (the backend's `handle`). Its name, vif<D>.<N>, is the
// TAP's default name, the tag of the vif's log lines and what unetbackctl
// accepts.

#include <compare>
#include <string>

#include "unetback/rings/ids.hpp"

namespace unetback::control {

struct vif_id {
  domid frontend;
  unsigned devid = 0;

  friend auto operator<=>(const vif_id&, const vif_id&) = default;
  /// "vif<D>.<N>".
  [[nodiscard]] std::string name() const {
    return "vif" + std::to_string(frontend.value()) + "." + std::to_string(devid);
  }
  /// "<D>/<N>": the vif's node below backend/vif (and error/backend/vif).
  [[nodiscard]] std::string xenstore_path() const {
    return std::to_string(frontend.value()) + "/" + std::to_string(devid);
  }
};

}  // namespace unetback::control
