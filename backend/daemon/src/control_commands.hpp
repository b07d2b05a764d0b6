#pragma once
// The commands unetbackd answers on its control socket (unetbackctl(8)).

#include "unetback/control/supervisor.hpp"
#include "unetback/ctl/control_server.hpp"

#include <string>

namespace unetback::daemon {

/// Registers list, stats, dump, log-level, disable, enable, kick, hash and
/// metrics on `server`, serving `sup`. Handlers run on the io_context
/// thread, like the supervisor.
void register_control_commands(ctl::control_server& server, control::supervisor& sup);

/// The daemon's metrics in the Prometheus text format (the `metrics`
/// command and the HTTP listener). Call on the io_context thread.
[[nodiscard]] std::string metrics_text(const control::supervisor& sup);

}  // namespace unetback::daemon
