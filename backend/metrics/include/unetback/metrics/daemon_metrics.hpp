#pragma once
// The daemon's metrics in the Prometheus text format: the one renderer behind
// both `unetbackctl metrics` (the control socket's `metrics` command) and the
// optional HTTP listener (metrics-listen). It reads the status the
// supervisor reports (control::supervisor::status()).

#include <string>
#include <string_view>

#include "unetback/control/vif_status.hpp"

namespace unetback::metrics {

/// The exposition text for `status` of a daemon whose version is `version`.
[[nodiscard]] std::string render_daemon_metrics(const control::daemon_status& status,
                                                std::string_view version);

}  // namespace unetback::metrics
