#pragma once
// Chooses the platform by name: "xen" on a real host, "sim" against
// netfront-sim's simulated guests (unetbackd --platform).

#include <memory>
#include <string>
#include <string_view>

#include "unetback/platform/platform.hpp"

namespace unetback::platform {

/// Settings for make_platform().
struct platform_options {
  /// sim only: where guests publish dom<D>.mem and the evtchn/ sockets live.
  std::string sim_dir = "/run/unetback-sim";
  /// Our own domain id (dom0 or a driver domain).
  domid self{0};
};

/// A new platform named `name` ("xen" or "sim"). Throws std::invalid_argument
/// for any other name, or for options the platform rejects.
std::unique_ptr<platform> make_platform(std::string_view name, const platform_options& options);

}  // namespace unetback::platform
