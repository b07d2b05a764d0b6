#pragma once
// unetbackd's settings: built-in defaults, then the TOML file (--config,
// default /etc/unetback/unetback.toml), then command-line flags. Parsing is a
// pure function of the arguments and the file, so tests drive it directly.
// Every value is range-checked; an error names the flag or key and the
// allowed values, and maps to exit status 2.

#include <spdlog/common.h>

#include <boost/asio/ip/tcp.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "unetback/control/supervisor.hpp"
#include "unetback/service/logging.hpp"
#include "unetback/service/syscall_filter.hpp"

namespace unetback::daemon {

/// Exit statuses of unetbackd (unetbackd(8)).
enum exit_status : int {
  exit_ok = 0,              ///< clean stop (or --help / --version)
  exit_failure = 1,         ///< runtime failure
  exit_usage = 2,           ///< bad flag, bad configuration file
  exit_netback_active = 3,  ///< the kernel's xen-netback is loaded
};

/// Everything the daemon needs to start.
struct daemon_options {
  std::string platform = "xen";  ///< "xen" | "sim"
  std::string sim_dir = "/run/unetback-sim";
  std::optional<std::string> xenstore;                          ///< XENSTORED_PATH override
  std::string control_socket = "/run/unetback/unetbackd.sock";  ///< unetbackctl's peer
  /// Where the HTTP listener serves GET /metrics; none (the default): no
  /// socket is opened.
  std::optional<boost::asio::ip::tcp::endpoint> metrics_listen;
  /// What a restarted daemon carries over (service::state_directory).
  std::string state_dir = "/run/unetback";
  spdlog::level::level_enum log_level = spdlog::level::info;
  service::log_target log_target = service::log_target::automatic;
  control::supervisor_options supervisor;  ///< vif defaults and per-vif overrides
  /// SIGTERM/SIGINT leave every vif Connected with its TAP (for an upgrade:
  /// the next daemon resumes them) instead of walking them to Closed.
  bool keep_vifs = false;
  /// After setup, run as this user (service::drop_privileges); none: stay uid 0
  /// with the kept capabilities.
  std::optional<std::string> user;
  /// What a system call outside the allow-list does (service::syscall_filter).
  service::syscall_filter_mode seccomp = service::syscall_filter_mode::kill;
};

/// Parsing stopped: print `message` (to stdout for exit_ok, else stderr)
/// and exit with `status`.
struct early_exit {
  int status = exit_usage;
  std::string message;
};

/// Default configuration file.
inline constexpr const char* default_config_path = "/etc/unetback/unetback.toml";

/// min(8, online CPUs), as Linux netback's max_queues default.
[[nodiscard]] unsigned default_max_queues();

/// Parses the command line (`args` without the program name) and the
/// configuration file it names.
[[nodiscard]] std::variant<daemon_options, early_exit> parse_command_line(
    const std::vector<std::string>& args);

}  // namespace unetback::daemon
