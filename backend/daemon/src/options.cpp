#include "unetback/daemon/options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <stdexcept>
#include <thread>

#include "config_file.hpp"
#include "unetback/metrics/listen_address.hpp"

namespace unetback::daemon {

namespace detail {

namespace {

template <class T>
void take(std::optional<T>& into, const std::optional<T>& from) {
  if (from) {
    into = from;
  }
}

}  // namespace

settings_layer merged(settings_layer base, const settings_layer& over) {
  take(base.platform, over.platform);
  take(base.sim_dir, over.sim_dir);
  take(base.xenstore, over.xenstore);
  take(base.control_socket, over.control_socket);
  take(base.metrics_listen, over.metrics_listen);
  take(base.state_dir, over.state_dir);
  take(base.log_level, over.log_level);
  take(base.log_target, over.log_target);
  take(base.max_xdp_headroom, over.max_xdp_headroom);
  take(base.keep_vifs, over.keep_vifs);
  take(base.user, over.user);
  take(base.seccomp, over.seccomp);
  take(base.vif.max_queues, over.vif.max_queues);
  take(base.vif.wait_for_hotplug, over.vif.wait_for_hotplug);
  take(base.vif.poll_us, over.vif.poll_us);
  take(base.vif.poll_budget_pct, over.vif.poll_budget_pct);
  take(base.vif.poll_max_steal_pct, over.vif.poll_max_steal_pct);
  take(base.vif.split_event_channels, over.vif.split_event_channels);
  take(base.vif.direct_path, over.vif.direct_path);
  take(base.vif.tx_batch, over.vif.tx_batch);
  take(base.vif.rx_batch, over.vif.rx_batch);
  take(base.vif.notify_always, over.vif.notify_always);
  take(base.vif.rx_backlog_bytes, over.vif.rx_backlog_bytes);
  take(base.vif.rx_stall_timeout_ms, over.vif.rx_stall_timeout_ms);
  take(base.vif.rx_drain_timeout_ms, over.vif.rx_drain_timeout_ms);
  take(base.vif.fault_backoff_max_ms, over.vif.fault_backoff_max_ms);
  for (const auto& [key, o] : over.per_vif) {
    base.per_vif[key] = o;
  }
  return base;
}

control::vif_options applied(control::vif_options v, const vif_overrides& o) {
  v.max_queues = static_cast<unsigned>(o.max_queues.value_or(v.max_queues));
  v.wait_for_hotplug = o.wait_for_hotplug.value_or(v.wait_for_hotplug);
  v.tuning.poll_us = static_cast<std::uint32_t>(o.poll_us.value_or(v.tuning.poll_us));
  v.tuning.poll_budget_pct =
      static_cast<std::uint32_t>(o.poll_budget_pct.value_or(v.tuning.poll_budget_pct));
  v.tuning.poll_max_steal_pct =
      static_cast<std::uint32_t>(o.poll_max_steal_pct.value_or(v.tuning.poll_max_steal_pct));
  v.split_event_channels = o.split_event_channels.value_or(v.split_event_channels);
  v.direct_path = o.direct_path.value_or(v.direct_path);
  v.tuning.tx_batch = static_cast<std::uint32_t>(o.tx_batch.value_or(v.tuning.tx_batch));
  v.tuning.rx_batch = static_cast<std::uint32_t>(o.rx_batch.value_or(v.tuning.rx_batch));
  v.tuning.notify_always = o.notify_always.value_or(v.tuning.notify_always);
  v.tuning.rx_backlog_bytes = static_cast<std::size_t>(
      o.rx_backlog_bytes.value_or(static_cast<long long>(v.tuning.rx_backlog_bytes)));
  v.tuning.rx_stall_timeout =
      std::chrono::milliseconds(o.rx_stall_timeout_ms.value_or(v.tuning.rx_stall_timeout.count()));
  v.tuning.rx_drain_timeout =
      std::chrono::milliseconds(o.rx_drain_timeout_ms.value_or(v.tuning.rx_drain_timeout.count()));
  v.fault_backoff_max =
      std::chrono::milliseconds(o.fault_backoff_max_ms.value_or(v.fault_backoff_max.count()));
  return v;
}

daemon_options resolve(const settings_layer& layer) {
  daemon_options opts;
  opts.platform = layer.platform.value_or(opts.platform);
  opts.sim_dir = layer.sim_dir.value_or(opts.sim_dir);
  opts.xenstore = layer.xenstore;
  opts.control_socket = layer.control_socket.value_or(opts.control_socket);
  opts.metrics_listen = layer.metrics_listen;
  opts.state_dir = layer.state_dir.value_or(opts.state_dir);
  opts.log_level = layer.log_level.value_or(opts.log_level);
  opts.log_target = layer.log_target.value_or(opts.log_target);
  opts.keep_vifs = layer.keep_vifs.value_or(opts.keep_vifs);
  opts.user = layer.user;
  opts.seccomp = layer.seccomp.value_or(opts.seccomp);
  control::vif_options defaults;
  defaults.max_queues = default_max_queues();
  defaults.max_xdp_headroom =
      static_cast<std::uint32_t>(layer.max_xdp_headroom.value_or(defaults.max_xdp_headroom));
  opts.supervisor.defaults = applied(defaults, layer.vif);
  for (const auto& [key, o] : layer.per_vif) {
    opts.supervisor.per_vif[key] = applied(opts.supervisor.defaults, o);
  }
  return opts;
}

}  // namespace detail

unsigned default_max_queues() {
  return std::clamp(std::thread::hardware_concurrency(), 1U, 8U);
}

namespace {

// Values as the command line gave them (empty optionals: not given).
struct cli_values {
  std::string config;
  std::string platform, sim_dir, xenstore, control_socket, state_dir, log_level, log_target;
  std::string metrics_listen, user, seccomp;
  long long max_queues = 0, tx_batch = 0, rx_batch = 0, rx_backlog = 0;
  long long rx_stall_timeout_ms = 0, rx_drain_timeout_ms = 0, max_xdp_headroom = 0;
  long long fault_backoff_max_ms = 0;
  std::string poll_us;
  long long poll_budget_pct = 0, poll_max_steal_pct = 0;
  bool wait_for_hotplug = true;
  bool split_event_channels = true;
  bool direct_path = false;
  bool no_wait = false;
  bool keep_vifs = false;
  bool notify_always = false;
};

std::string range_text(detail::range r) {
  return std::to_string(r.lo) + ".." + std::to_string(r.hi);
}

// A CLI11 check that runs `parse` on the value and reports its
// std::invalid_argument (the same parser the configuration file uses).
template <class Parse>
std::function<std::string(const std::string&)> parsed_by(Parse parse) {
  return [parse](const std::string& s) {
    try {
      (void)parse(s);
      return std::string();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
  };
}

void define(CLI::App& app, cli_values& v) {
  using detail::range;
  const auto in = [](range r) { return CLI::Range(r.lo, r.hi); };
  app.add_option("--config", v.config,
                 std::string("configuration file (default ") + default_config_path + ")");
  app.add_option("--platform", v.platform, "xen | sim")->check(CLI::IsMember({"xen", "sim"}));
  app.add_option("--sim-dir", v.sim_dir, "simulated guests' directory (--platform sim)");
  app.add_option("--xenstore", v.xenstore, "xenstored socket (sets XENSTORED_PATH)");
  app.add_option("--control-socket", v.control_socket,
                 "unetbackctl's socket (/run/unetback/unetbackd.sock)");
  app.add_option("--metrics-listen", v.metrics_listen,
                 "serve GET /metrics (Prometheus) on ADDRESS:PORT, e.g. 127.0.0.1:9477 "
                 "(default: off, no socket)")
      ->check(parsed_by(metrics::parse_listen_address));
  app.add_option("--state-dir", v.state_dir,
                 "what a restarted daemon carries over, on a tmpfs (/run/unetback)")
      ->check([](const std::string& p) {
        return p.starts_with('/') ? std::string() : std::string("must be an absolute path");
      });
  app.add_option("--log-level", v.log_level, "trace, debug, info, warning, error, critical, off");
  app.add_option("--log-target", v.log_target, "auto, journal, stderr");
  app.add_option("--max-queues", v.max_queues,
                 "multi-queue-max-queues, " + range_text(detail::max_queues_range))
      ->check(in(detail::max_queues_range));
  app.add_option("--poll-us", v.poll_us,
                 "longest busy-poll: auto or microseconds, " + range_text(detail::poll_us_range))
      ->check(parsed_by(detail::parse_poll_us));
  app.add_option("--poll-budget-pct", v.poll_budget_pct,
                 "most of every 10 ms a queue may busy-poll, " + range_text(detail::percent_range))
      ->check(in(detail::percent_range));
  app.add_option("--poll-max-steal-pct", v.poll_max_steal_pct,
                 "no busy-polling while dom0's steal time exceeds this, " +
                     range_text(detail::percent_range))
      ->check(in(detail::percent_range));
  app.add_option("--split-event-channels", v.split_event_channels,
                 "offer feature-split-event-channels (true|false)");
  app.add_option("--direct-path", v.direct_path,
                 "hand guest-to-guest frames between paired vifs' workers, past the TAP and the "
                 "bridge, where no host policy could see them (true|false; default false)");
  app.add_option("--tx-batch", v.tx_batch,
                 "TX requests per sweep, " + range_text(detail::batch_range))
      ->check(in(detail::batch_range));
  app.add_option("--rx-batch", v.rx_batch,
                 "RX packets per sweep, " + range_text(detail::batch_range))
      ->check(in(detail::batch_range));
  app.add_option("--rx-backlog-bytes", v.rx_backlog,
                 "RX backlog cap, " + range_text(detail::backlog_range))
      ->check(in(detail::backlog_range));
  app.add_option("--rx-stall-timeout-ms", v.rx_stall_timeout_ms,
                 "no RX buffers this long: carrier off, " + range_text(detail::stall_ms_range))
      ->check(in(detail::stall_ms_range));
  app.add_option("--rx-drain-timeout-ms", v.rx_drain_timeout_ms,
                 "no RX buffers this long: drop what waits, " + range_text(detail::stall_ms_range))
      ->check(in(detail::stall_ms_range));
  app.add_option("--fault-backoff-max-ms", v.fault_backoff_max_ms,
                 "most a frontend that keeps faulting waits to connect again (0: no wait), " +
                     range_text(detail::backoff_ms_range))
      ->check(in(detail::backoff_ms_range));
  app.add_option("--max-xdp-headroom", v.max_xdp_headroom,
                 "most XDP headroom a frontend may request (bytes), " +
                     range_text(detail::xdp_headroom_range))
      ->check(in(detail::xdp_headroom_range));
  app.add_flag("--notify-always", v.notify_always,
               "kick the guest after every sweep with responses (benchmark lever)");
  auto* wait = app.add_option("--wait-for-hotplug", v.wait_for_hotplug,
                              "publish Connected only after hotplug-status=connected (true|false)");
  app.add_flag("--no-wait-hotplug,--no-wait-for-hotplug", v.no_wait,
               "do not wait for the hotplug script; bridge the TAP ourselves")
      ->excludes(wait);
  app.add_option("--user", v.user,
                 "after setup, run as this unprivileged user (default: stay root, "
                 "capabilities dropped)")
      ->check(parsed_by(detail::parse_user_name));
  app.add_option("--seccomp", v.seccomp,
                 "a system call outside the allow-list: kill (default), log, off")
      ->check(parsed_by(service::parse_syscall_filter_mode));
  app.add_flag("--keep-vifs", v.keep_vifs,
               "on SIGTERM/SIGINT leave vifs Connected with their TAPs for the next daemon");
}

template <class T>
std::optional<T> given(const CLI::App& app, const char* name, const T& value) {
  return app.count(name) > 0 ? std::optional<T>(value) : std::nullopt;
}

detail::settings_layer layer_of(const CLI::App& app, const cli_values& v) {
  detail::settings_layer s;
  s.platform = given(app, "--platform", v.platform);
  s.sim_dir = given(app, "--sim-dir", v.sim_dir);
  s.xenstore = given(app, "--xenstore", v.xenstore);
  s.control_socket = given(app, "--control-socket", v.control_socket);
  s.state_dir = given(app, "--state-dir", v.state_dir);
  if (app.count("--metrics-listen") > 0) {
    s.metrics_listen = metrics::parse_listen_address(v.metrics_listen);
  }
  try {
    if (app.count("--log-level") > 0) {
      s.log_level = service::parse_log_level(v.log_level);
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--log-level: ") + e.what());
  }
  try {
    if (app.count("--log-target") > 0) {
      s.log_target = service::parse_log_target(v.log_target);
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--log-target: ") + e.what());
  }
  s.vif.max_queues = given(app, "--max-queues", v.max_queues);
  if (app.count("--poll-us") > 0) {
    s.vif.poll_us = detail::parse_poll_us(v.poll_us);
  }
  s.vif.poll_budget_pct = given(app, "--poll-budget-pct", v.poll_budget_pct);
  s.vif.poll_max_steal_pct = given(app, "--poll-max-steal-pct", v.poll_max_steal_pct);
  s.vif.split_event_channels = given(app, "--split-event-channels", v.split_event_channels);
  s.vif.direct_path = given(app, "--direct-path", v.direct_path);
  s.vif.tx_batch = given(app, "--tx-batch", v.tx_batch);
  s.vif.rx_batch = given(app, "--rx-batch", v.rx_batch);
  s.vif.rx_backlog_bytes = given(app, "--rx-backlog-bytes", v.rx_backlog);
  s.vif.rx_stall_timeout_ms = given(app, "--rx-stall-timeout-ms", v.rx_stall_timeout_ms);
  s.vif.rx_drain_timeout_ms = given(app, "--rx-drain-timeout-ms", v.rx_drain_timeout_ms);
  s.vif.fault_backoff_max_ms = given(app, "--fault-backoff-max-ms", v.fault_backoff_max_ms);
  s.max_xdp_headroom = given(app, "--max-xdp-headroom", v.max_xdp_headroom);
  if (v.notify_always) {
    s.vif.notify_always = true;
  }
  s.vif.wait_for_hotplug = given(app, "--wait-for-hotplug", v.wait_for_hotplug);
  if (v.no_wait) {
    s.vif.wait_for_hotplug = false;
  }
  if (v.keep_vifs) {
    s.keep_vifs = true;
  }
  s.user = given(app, "--user", v.user);
  if (app.count("--seccomp") > 0) {
    s.seccomp = service::parse_syscall_filter_mode(v.seccomp);
  }
  return s;
}

}  // namespace

std::variant<daemon_options, early_exit> parse_command_line(const std::vector<std::string>& args) {
  CLI::App app{"unetbackd: userspace Xen network backend for xl's vif devices", "unetbackd"};
  app.set_version_flag("--version", std::string("unetbackd ") + UNETBACK_VERSION);
  cli_values v;
  define(app, v);
  std::vector<std::string> argv_storage{"unetbackd"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  argv.reserve(argv_storage.size());
  for (const auto& a : argv_storage) {
    argv.push_back(a.c_str());
  }
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    return early_exit{exit_ok, app.help()};
  } catch (const CLI::CallForVersion&) {
    return early_exit{exit_ok, app.version()};
  } catch (const CLI::ParseError& e) {
    return early_exit{exit_usage, std::string("unetbackd: ") + e.what() +
                                      "\nRun with --help for more information."};
  }
  try {
    const detail::settings_layer cli = layer_of(app, v);
    const bool explicit_file = app.count("--config") > 0;
    const detail::settings_layer file =
        detail::read_config_file(explicit_file ? v.config : default_config_path, !explicit_file);
    return detail::resolve(detail::merged(file, cli));
  } catch (const std::invalid_argument& e) {
    return early_exit{exit_usage, std::string("unetbackd: ") + e.what()};
  }
}

}  // namespace unetback::daemon
