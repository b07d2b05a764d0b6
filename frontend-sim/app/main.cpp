// netfront-sim: a userspace Xen netfront. On the sim platform it owns guest
// domain D's memory and connects to sim-xenstored as domain D; with
// --platform xen it runs inside a real domU (its gntalloc, evtchn and xenbus
// devices). Either way it runs the frontend handshake for vif D.N and bridges
// the rings to a multi-queue TAP (in the guest's network namespace).
//
// Exit status: 0 stopped by SIGINT/SIGTERM after a clean close; 1 bad command
// line; 2 setup failure (domain, XenStore, frontend dir, TAP); 3 handshake
// failure (refused or timed out); 4 the backend closed the device (without
// --reconnect); 5 the backend violated the ring protocol.

#include <linux/if_tun.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "unetback/rings/ids.hpp"
#include "unetback/sim/guest_domain.hpp"
#include "unetback/sim/netfront/frontend_device.hpp"
#include "unetback/sim/netfront/guest_multicast.hpp"
#include "unetback/sim/netfront/guest_tap.hpp"
#include "unetback/sim/netfront/personality.hpp"
#include "unetback/sim/netfront/ring_attack.hpp"
#include "unetback/sim/netfront/sim_frontend_memory.hpp"
#include "unetback/sim/netfront/xen_frontend_memory.hpp"
#include "unetback/util/guarded_main.hpp"
#include "unetback/util/rate_limit.hpp"
#include "unetback/xs/watcher.hpp"

namespace {

using namespace unetback;

enum exit_code : int {
  ok = 0,
  usage = 1,
  setup_failed = 2,
  handshake_failed = 3,
  backend_closed = 4,
  backend_fault = 5,
};

struct cli_options {
  std::string platform = "sim";
  unsigned domid = 0;
  std::string xenstore_dir;
  std::string sim_dir = "/run/unetback-sim";
  unsigned devid = 0;
  unsigned queues = 1;
  bool split = false;
  bool no_sg = false;
  bool no_gso = false;
  std::optional<unsigned> mtu;
  bool ctrl_ring = false;
  std::vector<std::uint32_t> hash_mapping;
  std::string netns;
  std::string ifname = "eth0";
  bool reconnect = false;
  unsigned handshake_timeout = 30;
  std::string ready_file;
  std::string log_level = "info";
  std::string tx_queue_select = "flow";
  std::string attack;
  std::vector<std::string> set_keys;
  unsigned attack_wait_ms = 3000;
  std::string personality = "linux";
  bool no_csum_offload = false;
  bool multicast_control = false;
  unsigned multicast_toggle_ms = 0;
  unsigned tx_slot_bytes = rings::page_size;
};

/// How often the guest interface's multicast list is read and sent on.
constexpr std::chrono::milliseconds multicast_sync_period{200};

/// A CLI check that accepts the names `parse` knows and lists `names` otherwise.
template <typename Parse, typename Names>
auto one_of(Parse parse, const Names& names) {
  auto list = fmt::format("one of: {}", fmt::join(names, ", "));
  return [parse, list](const std::string& name) { return parse(name) ? std::string() : list; };
}

void add_options(CLI::App& app, cli_options& o) {
  app.add_option("--platform", o.platform,
                 "sim (a simulated domain) | xen (inside a real domU: needs the guest's "
                 "xen-gntalloc and xen-evtchn modules)")
      ->check(CLI::IsMember({"sim", "xen"}))
      ->capture_default_str();
  app.add_option("--domid", o.domid, "guest domain id (sim; xen reads its own)")
      ->check(CLI::Range(1, int{unetback::domid_max}));
  app.add_option("--xenstore-dir", o.xenstore_dir, "sim-xenstored dir (socket.d<D>; sim only)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--sim-dir", o.sim_dir, "simulated hypervisor dir")->capture_default_str();
  app.add_option("--devid", o.devid, "vif device id")->check(CLI::Range(0, 0xffff));
  app.add_option("--queues", o.queues, "queues to request")->check(CLI::Range(1, 64));
  app.add_flag("--split-event-channels", o.split, "one event channel per direction");
  app.add_flag("--no-sg", o.no_sg, "do not offer feature-sg");
  app.add_flag("--no-gso", o.no_gso, "do not offer feature-gso-tcpv4/v6");
  app.add_option("--personality", o.personality,
                 "the guest to behave like: linux (xen-netfront) | xenvif (Windows PV drivers: "
                 "4 queues, split event channels, control ring, multicast control toggled) | "
                 "gplpv (19-slot TSO frames) | minios (no SG, GSO or checksum offload); the "
                 "options below override it")
      ->check(one_of(sim::parse_personality, sim::personality_names()))
      ->capture_default_str();
  app.add_flag("--no-csum-offload", o.no_csum_offload,
               "write feature-no-csum-offload: full checksums both ways");
  app.add_flag("--multicast-control", o.multicast_control,
               "request-multicast-control: send the guest interface's multicast list");
  app.add_option("--multicast-toggle-ms", o.multicast_toggle_ms,
                 "turn request-multicast-control off and on every N ms, never re-sending the "
                 "list (0: never)")
      ->check(CLI::Range(0, 3600000));
  app.add_option("--tx-slot-bytes", o.tx_slot_bytes,
                 "payload per TX data slot (a page, as Linux; the least gives 65535-byte "
                 "frames 19 slots)")
      ->check(CLI::Range(sim::min_tx_slot_bytes, static_cast<std::uint32_t>(rings::page_size)));
  app.add_option("--mtu", o.mtu, "guest interface MTU")->check(CLI::Range(68, 65521));
  app.add_flag("--ctrl-ring", o.ctrl_ring, "set up a control ring and send a Toeplitz config");
  app.add_option("--hash-mapping", o.hash_mapping,
                 "Toeplitz mapping to send, entry i -> queue (comma list; needs --ctrl-ring)")
      ->delimiter(',')
      ->needs("--ctrl-ring");
  app.add_option("--netns", o.netns,
                 "guest network namespace (/run/netns/NAME; sim: required, xen: default the "
                 "current one)");
  app.add_option("--ifname", o.ifname, "guest interface name")->capture_default_str();
  app.add_flag("--reconnect", o.reconnect, "re-initialise after the backend closes");
  app.add_option("--handshake-timeout", o.handshake_timeout, "seconds to reach Connected")
      ->check(CLI::Range(1, 3600));
  app.add_option("--ready-file", o.ready_file, "file created once Connected");
  app.add_option("--log-level", o.log_level, "trace|debug|info|warn|error");
  app.add_option("--tx-queue-select", o.tx_queue_select,
                 "guest TX queue of each frame: flow (the kernel's flow steering, a flow stays "
                 "on one queue) | random (every frame to a random queue; benchmark lever)")
      ->check(CLI::IsMember({"flow", "random"}))
      ->capture_default_str();
  app.add_option("--attack", o.attack,
                 "once Connected, attack queue 0's TX ring and exit (the report is the JSON "
                 "object's \"attack\")")
      ->check(one_of(sim::parse_ring_attack, sim::ring_attack_names()));
  app.add_option("--set-key", o.set_keys,
                 "KEY=VALUE written over the handshake's own frontend key (hostile; "
                 "repeatable), e.g. multi-queue-num-queues=999")
      ->check([](const std::string& kv) {
        const auto eq = kv.find('=');
        return eq != std::string::npos && eq > 0 ? std::string() : "expected KEY=VALUE";
      });
  app.add_option("--attack-wait-ms", o.attack_wait_ms,
                 "how long to collect TX responses after the attack")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  app.footer(
      "Exit status: 0 clean stop on SIGINT/SIGTERM, 1 bad arguments, 2 setup failure, "
      "3 handshake refused or timed out, 4 backend closed the device, 5 backend protocol "
      "violation. Per-queue counters are printed to stdout as JSON on exit.");
}

/// Options that only the sim platform requires (checked after parsing).
std::optional<std::string> missing_sim_option(const cli_options& o) {
  if (o.platform != "sim") {
    return std::nullopt;
  }
  if (o.domid == 0) {
    return "--domid is required with --platform sim";
  }
  if (o.xenstore_dir.empty()) {
    return "--xenstore-dir is required with --platform sim";
  }
  if (o.netns.empty()) {
    return "--netns is required with --platform sim";
  }
  return std::nullopt;
}

/// Pages shared at once: both rings and every slot buffer of each queue,
/// plus the control ring and its key and mapping pages.
std::uint32_t page_budget(const cli_options& o) {
  const std::uint32_t per_queue = 2 + sim::frontend_queue::tx_ids + sim::frontend_queue::rx_ids;
  return o.queues * per_queue + 16;
}

sim::domain_config domain_config_for(const cli_options& o) {
  sim::domain_config c;
  c.sim_dir = o.sim_dir;
  c.id = domid{static_cast<std::uint16_t>(o.domid)};
  c.page_count = page_budget(o);
  c.grant_count = c.page_count + sim::first_free_grant_ref + 16;
  c.port_count = 2 * o.queues + 16;
  c.map_record_count = 4 * o.queues + 16;
  return c;
}

/// The frontend this run plays: the personality's profile, then the options
/// given on the command line.
sim::personality_profile effective_profile(const CLI::App& app, const cli_options& o) {
  sim::personality_profile p = sim::profile_of(
      sim::parse_personality(o.personality).value_or(sim::personality::linux_netfront));
  sim::frontend_request& r = p.request;
  if (app.count("--queues") != 0) {
    r.queues = o.queues;
  }
  r.split_event_channels |= o.split;
  r.sg &= !o.no_sg;
  r.gso &= !o.no_gso;
  r.no_csum_offload |= o.no_csum_offload;
  r.ipv6_csum_offload &= !r.no_csum_offload;
  r.ctrl_ring |= o.ctrl_ring;
  r.multicast_control |= o.multicast_control;
  if (app.count("--multicast-toggle-ms") != 0) {
    p.multicast_toggle_ms = o.multicast_toggle_ms;
  }
  if (app.count("--tx-slot-bytes") != 0) {
    r.tx_slot_bytes = o.tx_slot_bytes;
  }
  return p;
}

sim::tap_opener make_tap_opener(const cli_options& o, const sim::frontend_request& r) {
  return [o, r](std::uint32_t queues, const sim::backend_features& be,
                const std::optional<std::string>& mac) {
    sim::guest_tap_options t;
    t.netns = o.netns;
    t.ifname = o.ifname;
    t.queues = queues;
    // Without checksum offload the guest stack completes every checksum itself.
    t.offload_flags = r.no_csum_offload ? 0U : unsigned{TUN_F_CSUM};
    const bool tso = !r.no_csum_offload && r.sg && r.gso && be.sg;
    if (tso && be.gso_tcpv4) {
      t.offload_flags |= TUN_F_TSO4;
    }
    if (tso && be.gso_tcpv6) {
      t.offload_flags |= TUN_F_TSO6;
    }
    t.mtu = o.mtu;
    t.mac = mac;
    t.tx_select =
        sim::parse_tx_queue_select(o.tx_queue_select).value_or(sim::tx_queue_select::flow);
    if (t.mtu && *t.mtu > 1500 && !(be.sg && r.sg)) {
      spdlog::warn("no scatter-gather (backend or frontend): MTU clamped to 1500");
      t.mtu = 1500;
    }
    return sim::open_guest_tap(t);
  };
}

nlohmann::json counters_json(sim::frontend_device& dev, int code) {
  nlohmann::json out;
  out["exit"] = code;
  out["frontend"] = dev.frontend_path();
  if (dev.ctrl_config_ok()) {
    out["ctrl_config_ok"] = *dev.ctrl_config_ok();
  }
  out["queues"] = nlohmann::json::array();
  for (const sim::queue_counters& c : dev.retired_counters()) {
    const auto v = [](const std::atomic<std::uint64_t>& a) { return a.load(); };
    out["queues"].push_back({{"tx_packets", v(c.tx_packets)},
                             {"tx_max_slots", v(c.tx_max_slots)},
                             {"rx_partial_csum", v(c.rx_partial_csum)},
                             {"mcast_sent", v(c.mcast_sent)},
                             {"mcast_errors", v(c.mcast_errors)},
                             {"tx_bytes", v(c.tx_bytes)},
                             {"tx_dropped", v(c.tx_dropped)},
                             {"tx_error_responses", v(c.tx_error_responses)},
                             {"rx_packets", v(c.rx_packets)},
                             {"rx_bytes", v(c.rx_bytes)},
                             {"rx_errors", v(c.rx_errors)},
                             {"rx_dropped", v(c.rx_dropped)},
                             {"grants_busy", v(c.grants_busy)},
                             {"events", v(c.events)}});
  }
  return out;
}

/// Runs `attack` on the connected device: its name, every TX response's
/// status within the wait, and the backend's state afterwards.
nlohmann::json attack_report(sim::frontend_device& dev, sim::ring_attack attack,
                             std::chrono::milliseconds wait) {
  const sim::ring_attack_outcome outcome = sim::run_ring_attack(dev, attack, wait);
  nlohmann::json j;
  j["name"] = std::string(sim::to_string(attack));
  j["tx_statuses"] = outcome.statuses;
  j["kicks"] = outcome.kicks;
  j["backend_state"] = dev.xenstore().read(dev.backend_state_path()).value_or("");
  return j;
}

/// The guest side of multicast control once connected: the interface's list
/// followed every multicast_sync_period; with a toggle period,
/// request-multicast-control turned off and on again (XenVif when NDIS goes
/// to all-multicast and back), never re-sending the list.
class multicast_follower {
 public:
  multicast_follower(boost::asio::io_context& io, sim::frontend_device& dev, const cli_options& o,
                     std::uint32_t toggle_ms)
      : dev_(dev), o_(o), toggle_period_(toggle_ms), sync_timer_(io), toggle_timer_(io) {}

  /// Once: a reconnection finds the timers running.
  void start() {
    if (started_) {
      return;
    }
    started_ = true;
    sync();
    if (toggle_period_.count() != 0) {
      schedule_toggle();
    }
  }
  [[nodiscard]] unsigned toggles() const { return toggles_; }

 private:
  void sync() {
    try {
      dev_.sync_multicast_list(sim::read_multicast_list(o_.netns, o_.ifname));
    } catch (const std::exception& e) {
      UNETBACK_LOG_RATELIMITED(spdlog::level::warn, "multicast list: {}", e.what());
    }
    sync_timer_.expires_after(multicast_sync_period);
    sync_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) {
        sync();
      }
    });
  }
  void schedule_toggle() {
    toggle_timer_.expires_after(toggle_period_);
    toggle_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) {
        return;
      }
      on_ = !on_;
      dev_.set_multicast_control(on_);
      toggles_ += on_ ? 1 : 0;  // a whole off-and-on
      schedule_toggle();
    });
  }

  sim::frontend_device& dev_;
  const cli_options& o_;
  std::chrono::milliseconds toggle_period_;
  boost::asio::steady_timer sync_timer_;
  boost::asio::steady_timer toggle_timer_;
  bool started_ = false;
  bool on_ = true;
  unsigned toggles_ = 0;
};

/// Runs the device until a signal, a close, a failure or the end of an
/// --attack; returns the exit code, and in `report` the attack's and the
/// multicast follower's results.
int run(sim::frontend_device& dev, const cli_options& o, const sim::personality_profile& profile,
        nlohmann::json& report) {
  boost::asio::io_context io;
  multicast_follower multicast(io, dev, o, profile.multicast_toggle_ms);
  int code = ok;
  const auto finish = [&](int c) {
    code = c;
    io.stop();
  };
  boost::asio::steady_timer timeout(io, std::chrono::seconds(o.handshake_timeout));
  timeout.async_wait([&](const boost::system::error_code& ec) {
    if (!ec && !dev.connected()) {
      spdlog::error("{}: no connection within {} s", dev.frontend_path(), o.handshake_timeout);
      finish(handshake_failed);
    }
  });
  xs::watcher watcher(dev.xenstore(), io.get_executor(), [&](std::string_view, std::string_view) {
    try {
      switch (dev.on_backend_changed()) {
        case sim::frontend_device::outcome::connected:
          timeout.cancel();
          if (!o.ready_file.empty()) {
            std::ofstream(o.ready_file) << "connected\n";
          }
          if (const auto a = sim::parse_ring_attack(o.attack)) {
            boost::asio::post(io, [&, a] {
              report["attack"] =
                  attack_report(dev, *a, std::chrono::milliseconds(o.attack_wait_ms));
              finish(ok);
            });
          } else if (profile.request.multicast_control) {
            multicast.start();
          }
          break;
        case sim::frontend_device::outcome::closed:
          finish(backend_closed);
          break;
        case sim::frontend_device::outcome::failed:
          finish(handshake_failed);
          break;
        case sim::frontend_device::outcome::waiting:
          break;
      }
    } catch (const std::exception& e) {
      spdlog::error("{}: {}", dev.frontend_path(), e.what());
      finish(handshake_failed);
    }
  });
  watcher.add(dev.backend_state_path(), "backend-state");
  boost::asio::steady_timer fault_check(io);
  std::function<void()> check = [&] {
    fault_check.expires_after(std::chrono::milliseconds(200));
    fault_check.async_wait([&](const boost::system::error_code& ec) {
      if (ec) {
        return;
      }
      if (dev.faulted()) {
        finish(backend_fault);
        return;
      }
      check();
    });
  };
  check();
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) {
      finish(ok);
    }
  });
  io.run();
  if (profile.request.multicast_control) {
    report["multicast_toggles"] = multicast.toggles();
  }
  return code;
}

}  // namespace

namespace {

/// The guest this process plays: its memory, its XenStore connection and id.
struct guest {
  std::unique_ptr<sim::guest_domain> domain;  // sim only
  std::unique_ptr<sim::frontend_memory> memory;
  std::optional<xs::client> xs;
  domid self;
};

guest open_guest(const cli_options& o) {
  guest g;
  if (o.platform == "xen") {
    g.xs.emplace();
    g.self = g.xs->own_domid();
    g.memory = std::make_unique<sim::xen_frontend_memory>(g.self, page_budget(o));
    return g;
  }
  g.self = domid{static_cast<std::uint16_t>(o.domid)};
  g.domain = std::make_unique<sim::guest_domain>(domain_config_for(o));
  g.memory = std::make_unique<sim::sim_frontend_memory>(*g.domain);
  g.xs.emplace(xs::client::open(o.xenstore_dir + "/socket.d" + std::to_string(o.domid)));
  return g;
}

int run_program(int argc, char** argv) {
  CLI::App app{"netfront-sim: userspace Xen netfront (sim platform or a real domU)"};
  cli_options o;
  add_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : usage;
  }
  if (const auto missing = missing_sim_option(o)) {
    std::cerr << *missing << "\n";
    return usage;
  }
  const auto level = spdlog::level::from_str(o.log_level);
  spdlog::set_default_logger(spdlog::stderr_color_mt("netfront-sim"));
  spdlog::set_level(level);
  const sim::personality_profile profile = effective_profile(app, o);
  guest g;
  std::unique_ptr<sim::frontend_device> dev;
  try {
    g = open_guest(o);
    sim::device_options d;
    d.self = g.self;
    d.devid = o.devid;
    d.request = profile.request;
    d.reconnect = o.reconnect;
    d.hash_mapping = o.hash_mapping;
    for (const std::string& kv : o.set_keys) {
      const auto eq = kv.find('=');
      d.key_overrides.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    dev = std::make_unique<sim::frontend_device>(*g.memory, *g.xs, d,
                                                 make_tap_opener(o, profile.request));
    dev->write_state(sim::xenbus_state::initialising);
  } catch (const std::exception& e) {
    spdlog::error("setup failed: {}", e.what());
    return setup_failed;
  }
  nlohmann::json results = nlohmann::json::object();
  int code = run(*dev, o, profile, results);
  dev->close();
  if (code == ok && dev->faulted()) {
    code = backend_fault;
  }
  nlohmann::json report = counters_json(*dev, code);
  report["personality"] = o.personality;
  report.update(results);
  std::cout << report.dump() << std::endl;
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  return unetback::util::guarded_main("netfront-sim", [&] { return run_program(argc, argv); });
}
