// unetbackd's life: logging, the kernel-netback check, XenStore and the
// platform, then, before any thread exists, dropping capabilities, leaving uid 0
// for the configured user and installing the seccomp allow-list, then the
// supervisor on the io_context until a signal walks every vif to Closed
// (or, with keep-vifs, leaves them Connected for the next daemon).

#include "run.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <linux/capability.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <array>
#include <csignal>
#include <optional>
#include <span>
#include <stdexcept>

#include "control_commands.hpp"
#include "link_watch.hpp"
#include "unetback/control/datapath_queue_factory.hpp"
#include "unetback/control/supervisor.hpp"
#include "unetback/ctl/control_server.hpp"
#include "unetback/metrics/http_listener.hpp"
#include "unetback/platform/factory.hpp"
#include "unetback/service/netback_conflict.hpp"
#include "unetback/service/notify.hpp"
#include "unetback/service/privileges.hpp"
#include "unetback/service/state_directory.hpp"
#include "unetback/service/syscall_filter.hpp"
#include "unetback/service/watchdog.hpp"
#include "unetback/steering/rss_program.hpp"
#include "unetback/tap/tap_device.hpp"
#include "unetback/xs/client.hpp"

namespace unetback::daemon {

namespace {

// Everything built before the event loop; no thread is started here.
struct daemon_parts {
  std::optional<service::account> user;  // whom the daemon runs as after setup
  xs::client xs;
  std::unique_ptr<platform::platform> platform;
  std::unique_ptr<steering::rss_program> steering;  // null: unavailable
  std::unique_ptr<service::state_directory> state;
  std::unique_ptr<control::queue_factory> queues;
  std::unique_ptr<control::tap_factory> taps;
};

// Vifs whose guests may configure a Toeplitz mapping at once (a table each,
// allocated when the guest configures one).
constexpr std::uint32_t max_steered_vifs = 4096;

// Loading a BPF program needs CAP_BPF: now, before the capabilities go.
std::unique_ptr<steering::rss_program> load_steering() {
  try {
    auto program = steering::rss_program::load(max_steered_vifs);
    spdlog::info("RX steering by the guest's hash mapping is available (BPF program loaded)");
    return program;
  } catch (const std::system_error& e) {
    spdlog::warn("RX steering by the guest's hash mapping is unavailable: {}", e.what());
    return nullptr;
  }
}

daemon_parts setup(const daemon_options& o, std::optional<service::account> user) {
  // XENSTORED_PATH is set here, while the process is still single-threaded.
  xs::client xs = o.xenstore ? xs::client::open(*o.xenstore) : xs::client();
  const domid self = xs.own_domid();
  platform::platform_options po;
  po.sim_dir = o.sim_dir;
  po.self = self;
  auto plat = platform::make_platform(o.platform, po);
  auto steering = load_steering();
  auto state = std::make_unique<service::state_directory>(o.state_dir, user);
  auto queues = control::make_datapath_queue_factory(*plat, steering.get(), state->path());
  return daemon_parts{std::move(user),
                      std::move(xs),
                      std::move(plat),
                      std::move(steering),
                      std::move(state),
                      std::move(queues),
                      control::make_kernel_tap_factory()};
}

// metrics-listen is opt-in: without it no socket is opened. Bound before the
// capabilities go (a port below 1024 needs CAP_NET_BIND_SERVICE).
void open_metrics_listener(std::optional<metrics::http_listener>& into, boost::asio::io_context& io,
                           const daemon_options& o, const control::supervisor& sup) {
  if (!o.metrics_listen) {
    return;
  }
  try {
    into.emplace(io, *o.metrics_listen, [&sup] { return metrics_text(sup); });
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error(fmt::format("metrics-listen {} port {}: {}",
                                         o.metrics_listen->address().to_string(),
                                         o.metrics_listen->port(), e.code().message()));
  }
}

// Least privilege for the rest of the daemon's life: the kept capabilities, the
// configured user, the seccomp allow-list. Before any thread starts, so that
// every thread inherits all three.
void contain(const daemon_options& o, const daemon_parts& parts) {
  // The sim platform opens each guest's memory through /proc/<pid>/fd of a
  // netfront-sim that runs with full capabilities, which the kernel's ptrace
  // access check only allows with CAP_SYS_PTRACE (docs/sim-platform.md).
  static constexpr std::array<int, 2> sim_capabilities{CAP_NET_ADMIN, CAP_SYS_PTRACE};
  const std::span<const int> keep =
      o.platform == "sim" ? std::span<const int>(sim_capabilities) : service::daemon_capabilities;
  const service::account* user = parts.user ? &*parts.user : nullptr;
  const auto kept = service::drop_privileges(keep, user);
  service::install_syscall_filter(o.seccomp);
  spdlog::info("after setup: user {}, capabilities {}, seccomp {}",
               user ? fmt::format("{} (uid {})", user->name, user->uid) : "root (uid 0)", kept,
               o.seccomp == service::syscall_filter_mode::off   ? "off"
               : o.seccomp == service::syscall_filter_mode::log ? "log (allow-list not enforced)"
                                                                : "allow-list");
}

int serve(const daemon_options& o, daemon_parts& parts) {
  boost::asio::io_context io;
  control::supervisor sup(io.get_executor(), parts.xs, *parts.queues, *parts.taps, o.supervisor);
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  ctl::control_server control(io, o.control_socket);
  register_control_commands(control, sup);
  std::optional<metrics::http_listener> metrics_http;
  open_metrics_listener(metrics_http, io, o, sup);
  std::optional<link_watch> links;
  try {
    links.emplace(io.get_executor(), [&sup](const tap::link_event& e) { sup.note_link(e); });
    links->start();
  } catch (const std::system_error& e) {
    spdlog::warn("bridge changes of the vifs' TAPs will not be logged: {}", e.what());
  }
  contain(o, parts);
  sup.start();  // the first XenStore watch starts libxenstore's reader thread
  service::notify_ready(fmt::format("serving {} vifs", sup.vif_count()));
  service::watchdog wd(io);
  wd.start();
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) {
      return;
    }
    const char* what = o.keep_vifs ? "keeping" : "closing";
    spdlog::info("signal {}: {} {} vifs", sig, what, sup.vif_count());
    service::notify_stopping(fmt::format("{} {} vifs", what, sup.vif_count()));
    wd.stop();
    sup.shutdown(o.keep_vifs ? control::vif_exit::keep : control::vif_exit::close);
    io.stop();
  });
  io.run();
  return exit_ok;
}

}  // namespace

int run(const daemon_options& o) {
  service::configure_logging(o.log_target, o.log_level);
  if (o.platform == "xen") {
    if (const auto conflict = service::kernel_netback_conflict()) {
      spdlog::critical("{}", *conflict);
      return exit_netback_active;
    }
  }
  if (const auto problem = tap::tun_device_problem()) {
    spdlog::critical("{}", *problem);
    return exit_failure;
  }
  std::optional<service::account> user;
  try {
    if (o.user) {
      user = service::lookup_account(*o.user);
    }
  } catch (const std::invalid_argument& e) {
    spdlog::critical("{}", e.what());
    return exit_usage;
  }
  std::optional<daemon_parts> parts;
  try {
    parts.emplace(setup(o, std::move(user)));
  } catch (const std::invalid_argument& e) {
    spdlog::critical("platform {}: {}", o.platform, e.what());
    return exit_usage;
  } catch (const std::exception& e) {
    spdlog::critical("setup: {}", e.what());
    return exit_failure;
  }
  try {
    return serve(o, *parts);
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return exit_failure;
  }
}

}  // namespace unetback::daemon
