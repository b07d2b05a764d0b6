#pragma once
// The commands unetbackd answers on its control socket (unetbackctl(8)).

#include "unetback/control/supervisor.hpp"
#include "unetback/ctl/control_server.hpp"

namespace unetback::daemon {

/// Registers list, stats, dump, log-level, disable and enable on `server`,
/// serving `sup`. Handlers run on the io_context thread, like the supervisor.
void register_control_commands(ctl::control_server& server, control::supervisor& sup);

}  // namespace unetback::daemon
