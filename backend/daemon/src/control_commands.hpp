#pragma once
// The commands unetbackd answers on its control socket (unetbackctl(8)).

#include "unetback/control/supervisor.hpp"
#include "unetback/ctl/control_server.hpp"

namespace unetback::daemon {

/// Registers list, stats, dump and log-level on `server`, reading `sup`.
/// Handlers run on the io_context thread, like the supervisor itself.
void register_control_commands(ctl::control_server& server, const control::supervisor& sup);

}  // namespace unetback::daemon
