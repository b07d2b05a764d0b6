#pragma once
// Runs a vif hotplug script exactly as libxl does (§8.2): argv
// "<script> online|offline type_if=vif", stdin /dev/null, environment
// script, XENBUS_TYPE, XENBUS_PATH (relative), XENBUS_BASE_PATH, netdev, vif.

#include <chrono>
#include <string>

#include "vif_nodes.hpp"

namespace unetback::toolstack {

/// Returns the script's exit status (or -1 if it could not run or timed out
/// after libxl's 40 s LIBXL_HOTPLUG_TIMEOUT).
int run_hotplug_script(const vif_spec& spec, const std::string& action);

}  // namespace unetback::toolstack
