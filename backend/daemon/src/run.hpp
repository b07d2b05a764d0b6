#pragma once
// Runs unetbackd with parsed options until SIGINT/SIGTERM; returns the exit
// status (unetback::daemon::exit_status).

#include "unetback/daemon/options.hpp"

namespace unetback::daemon {

[[nodiscard]] int run(const daemon_options& options);

}  // namespace unetback::daemon
