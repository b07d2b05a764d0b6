#include "unetback/platform/factory.hpp"

#include <stdexcept>

#include "unetback/platform/xen/xen_platform.hpp"
#include "unetback/sim/sim_platform.hpp"

namespace unetback::platform {

std::unique_ptr<platform> make_platform(std::string_view name, const platform_options& options) {
  if (name == "xen") {
    return std::make_unique<xen_platform>(options.self);
  }
  if (name == "sim") {
    return std::make_unique<sim::sim_platform>(options.sim_dir, options.self);
  }
  throw std::invalid_argument("unknown platform '" + std::string(name) +
                              "' (expected \"xen\" or \"sim\")");
}

}  // namespace unetback::platform
