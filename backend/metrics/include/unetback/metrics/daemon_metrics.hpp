#pragma once
// The daemon's metrics in the Prometheus text format: the one renderer behind
// both `unetbackctl metrics` (the control socket's `metrics` command) and the
// optional HTTP listener (metrics-listen). It reads the status the
// supervisor describes (control::supervisor::describe(): {"adopted",
// "vifs": [{"domid", "devid", "state", "disabled", "failed", "queues":
// [{"queue", <counters>...}], "ctrl": {...}}]}).

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace unetback::metrics {

/// The exposition text for `status` (supervisor::describe()) of a daemon
/// whose version is `version`.
[[nodiscard]] std::string render_daemon_metrics(const nlohmann::json& status,
                                                std::string_view version);

}  // namespace unetback::metrics
