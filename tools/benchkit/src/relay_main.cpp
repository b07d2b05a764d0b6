// tap-relay: benchmark baseline (a), "the limit" (docs/performance.md).
// It creates the two TAPs the unetbackd path uses, with the same settings:
//   host side : <host-ifname> (vif1.0) in the calling namespace, MAC
//               fe:ff:ff:ff:ff:ff, enslaved to --bridge, as unetbackd + the
//               vif-bridge hotplug script leave it;
//   guest side: <guest-ifname> (eth0) inside /run/netns/<guest-netns>, the
//               frontend MAC, as netfront-sim creates it;
// both multi-queue (--queues), IFF_VNET_HDR (12 bytes), TUNSETOFFLOAD
// CSUM|TSO4|TSO6 (what unetbackd and netfront-sim set for each other's
// default features; --no-gso / --no-csum reduce them), and moves frames
// queue i <-> queue i with one thread per queue (relay_worker): no rings, no
// grant copies, no event channels.
//
// Exit status: 0 stopped by SIGINT/SIGTERM (per-queue counters as JSON on
// stdout); 1 bad arguments; 2 setup failure.

#include <linux/if_tun.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <csignal>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "relay_worker.hpp"
#include "unetback/tap/mac.hpp"
#include "unetback/tap/tap_device.hpp"
#include "unetback/util/guarded_main.hpp"

namespace {

using namespace unetback;

struct relay_options {
  std::string host_ifname = "vif1.0";
  std::string bridge;
  std::string guest_netns;
  std::string guest_ifname = "eth0";
  std::string guest_mac = "00:16:3e:00:00:01";
  unsigned queues = 1;
  unsigned mtu = 1500;
  bool no_gso = false;
  bool no_csum = false;
  std::vector<unsigned> cpus;
  std::string ready_file;
};

void add_options(CLI::App& app, relay_options& o) {
  app.add_option("--host-ifname", o.host_ifname, "host-side TAP (in our namespace)");
  app.add_option("--bridge", o.bridge, "bridge to enslave the host-side TAP to");
  app.add_option("--guest-netns", o.guest_netns, "guest namespace (/run/netns/NAME)")->required();
  app.add_option("--guest-ifname", o.guest_ifname, "guest-side TAP");
  app.add_option("--guest-mac", o.guest_mac, "guest-side TAP MAC");
  app.add_option("--queues", o.queues, "queues per TAP, one thread each")->check(CLI::Range(1, 16));
  app.add_option("--mtu", o.mtu, "MTU of both TAPs")->check(CLI::Range(68, 65521));
  app.add_flag("--no-gso", o.no_gso, "no TSO4/TSO6 offload (as netfront-sim --no-gso)");
  app.add_flag("--no-csum", o.no_csum, "no checksum offload at all (implies --no-gso)");
  app.add_option("--cpus", o.cpus, "pin queue i's thread to CPU cpus[i % n]");
  app.add_option("--ready-file", o.ready_file, "written once both TAPs are up");
}

unsigned offload_flags(const relay_options& o) {
  if (o.no_csum) {
    return 0;
  }
  return o.no_gso ? TUN_F_CSUM : (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6);
}

/// Both TAPs and their queues. Destroyed in reverse: queues closed, then the
/// devices (non-persistent: the interfaces disappear with the last fd).
struct relay_taps {
  tap::tap_device host;
  tap::tap_device guest;
  std::vector<std::unique_ptr<tap::tap_queue>> host_queues;
  std::vector<std::unique_ptr<tap::tap_queue>> guest_queues;
};

tap::tap_device make_host_tap(const relay_options& o) {
  tap::tap_device dev = tap::tap_device::create({o.host_ifname, offload_flags(o), false});
  dev.set_mac(tap::backend_vif_mac);
  dev.set_mtu(o.mtu);
  if (!o.bridge.empty()) {
    tap::add_to_bridge(o.bridge, dev.ifindex());
  }
  dev.set_up(true);
  return dev;
}

tap::tap_device make_guest_tap(const relay_options& o) {
  const auto mac = tap::parse_mac(o.guest_mac);
  if (!mac) {
    throw std::invalid_argument("bad --guest-mac " + o.guest_mac);
  }
  tap::tap_device dev =
      tap::tap_device::create_in_netns(o.guest_netns, {o.guest_ifname, offload_flags(o), false});
  dev.set_mac(*mac);
  dev.set_mtu(o.mtu);
  dev.set_up(true);
  return dev;
}

relay_taps make_taps(const relay_options& o) {
  relay_taps t{make_host_tap(o), make_guest_tap(o), {}, {}};
  t.host_queues = t.host.open_queues(o.queues);
  t.guest_queues = t.guest.open_queues(o.queues);
  return t;
}

void pin_current_thread(unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set);
}

nlohmann::json counters_json(const std::vector<std::unique_ptr<benchkit::relay_worker>>& workers) {
  nlohmann::json queues = nlohmann::json::array();
  for (std::size_t q = 0; q < workers.size(); ++q) {
    const benchkit::relay_counters& c = workers[q]->counters();
    queues.push_back({{"queue", q},
                      {"tx_packets", c.frames[benchkit::guest_tx]},
                      {"tx_bytes", c.bytes[benchkit::guest_tx]},
                      {"tx_dropped", c.dropped[benchkit::guest_tx]},
                      {"tx_read_errors", c.errors[benchkit::guest_tx]},
                      {"rx_packets", c.frames[benchkit::guest_rx]},
                      {"rx_bytes", c.bytes[benchkit::guest_rx]},
                      {"rx_dropped", c.dropped[benchkit::guest_rx]},
                      {"rx_read_errors", c.errors[benchkit::guest_rx]},
                      {"wakeups", c.wakeups}});
  }
  return {{"queues", queues}};
}

/// Runs one worker thread per queue until SIGINT/SIGTERM, then joins them.
nlohmann::json relay_until_signal(relay_taps& taps, const relay_options& o,
                                  const sigset_t& stop_signals) {
  const int stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) {
    throw std::system_error(errno, std::generic_category(), "eventfd");
  }
  std::vector<std::unique_ptr<benchkit::relay_worker>> workers;
  std::vector<std::thread> threads;
  for (unsigned q = 0; q < o.queues; ++q) {
    workers.push_back(std::make_unique<benchkit::relay_worker>(*taps.guest_queues[q],
                                                               *taps.host_queues[q], stop_fd));
    threads.emplace_back([&o, q, w = workers.back().get()] {
      const std::string name = "relay-q" + std::to_string(q);
      ::pthread_setname_np(::pthread_self(), name.c_str());
      if (!o.cpus.empty()) {
        pin_current_thread(o.cpus[q % o.cpus.size()]);
      }
      w->run();
    });
  }
  if (!o.ready_file.empty()) {
    std::ofstream(o.ready_file) << "ready\n";
  }
  int sig = 0;
  ::sigwait(&stop_signals, &sig);
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(stop_fd, &one, sizeof(one));
  for (auto& t : threads) {
    t.join();
  }
  ::close(stop_fd);
  return counters_json(workers);
}

}  // namespace

namespace {

int run_program(int argc, char** argv) {
  CLI::App app{"tap-relay: TAP <-> TAP relay, the unetback benchmark's baseline (a)"};
  relay_options o;
  add_options(app, o);
  CLI11_PARSE(app, argc, argv);
  // Workers inherit this mask: only the main thread's sigwait sees the signals.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  try {
    relay_taps taps = make_taps(o);
    std::cout << relay_until_signal(taps, o, stop_signals).dump() << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "tap-relay: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return unetback::util::guarded_main("tap-relay", [&] { return run_program(argc, argv); });
}
