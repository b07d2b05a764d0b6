#pragma once
// The labels every per-vif sample carries, and adding one more.

#include <string>
#include <utility>

#include "unetback/control/vif_status.hpp"
#include "unetback/metrics/exposition.hpp"

namespace unetback::metrics {

inline labels vif_labels(const control::vif_status& v) {
  return {{"vif", v.name()},
          {"domid", std::to_string(v.id.frontend.value())},
          {"devid", std::to_string(v.id.devid)}};
}

inline labels with(labels l, std::string name, std::string value) {
  l.emplace_back(std::move(name), std::move(value));
  return l;
}

}  // namespace unetback::metrics
