#include "world.hpp"

#include <stdlib.h>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace unetback::hostile {
namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string random_id() {
  std::random_device rd;
  return fmt::format("{:04x}", rd() & 0xFFFFU);
}

/// ASan's default 256 MiB quarantine would hide (or fake) RSS growth; cap it
/// so the memory bound measures the daemon, not the allocator.
std::string asan_options() {
  const char* base = std::getenv("ASAN_OPTIONS");
  std::string opts = base != nullptr ? base : "";
  if (!opts.empty()) {
    opts += ":";
  }
  return "ASAN_OPTIONS=" + opts + "quarantine_size_mb=8";
}

}  // namespace

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds period) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(period);
  }
  return true;
}

world::world(const world_options& options) : id_(random_id()) {
  host_ns_ = "ubhh-" + id_;
  std::filesystem::create_directories(xs_dir());
  std::filesystem::create_directories(sim_dir());
  std::filesystem::create_directories(logs());
  create_host_ns();
  start_xenstored();
  // The socket file appears at bind(), a moment before listen(): retry.
  for (int attempt = 0; !xs_; ++attempt) {
    try {
      xs_ = std::make_unique<xs::client>(xs::client::open((xs_dir() / "socket").string()));
    } catch (const std::exception&) {
      if (attempt >= 50) {
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  start_daemon(options);
}

world::~world() {
  daemon_.reset();
  xs_.reset();
  xenstored_.reset();
  if (ns_created_) {
    run_command({"ip", "netns", "del", host_ns_}, logs() / "world.log");
  }
  if (std::getenv("UNETBACK_KEEP_WORLD") != nullptr) {
    dir_.keep();
  }
}

std::filesystem::path world::bin(const std::string& name) const {
  const char* dir = std::getenv("UNETBACK_BIN");
  if (dir == nullptr) {
    throw std::runtime_error("set UNETBACK_BIN to the folder with unetbackd, sim-xl, ...");
  }
  return std::filesystem::path(dir) / name;
}

void world::create_host_ns() {
  const auto log = logs() / "world.log";
  if (run_command({"ip", "netns", "add", host_ns_}, log) != 0) {
    throw std::runtime_error("ip netns add " + host_ns_ + " failed (root needed)");
  }
  ns_created_ = true;
  // No IPv6 in the host namespace: no router solicitations, DAD or MLD
  // frames wander into a guest's RX ring behind a test's back.
  for (const char* key :
       {"net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"}) {
    run_command({"ip", "netns", "exec", host_ns_, "sysctl", "-q", "-w", key}, log);
  }
  const std::vector<std::vector<std::string>> steps{
      {"link", "set", "lo", "up"},
      {"link", "add", bridge(), "type", "bridge"},
      {"addr", "add", std::string(host_ip()) + "/24", "dev", bridge()},
      {"link", "set", bridge(), "up"},
  };
  for (const auto& s : steps) {
    if (ip_host(s) != 0) {
      throw std::runtime_error("setting up the host namespace failed");
    }
  }
}

int world::ip_host(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"ip", "-n", host_ns_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv, logs() / "world.log");
}

void world::start_xenstored() {
  xenstored_ = std::make_unique<child_process>(
      std::vector<std::string>{bin("sim-xenstored").string(), "--dir", xs_dir().string()},
      logs() / "sim-xenstored.log");
  if (!wait_until([&] { return std::filesystem::exists(xs_dir() / "socket"); }, 10s)) {
    throw std::runtime_error("sim-xenstored did not create its socket");
  }
}

void world::start_daemon(const world_options& options) {
  std::vector<std::string> argv{"ip",
                                "netns",
                                "exec",
                                host_ns_,
                                bin("unetbackd").string(),
                                "--platform",
                                "sim",
                                "--sim-dir",
                                sim_dir().string(),
                                "--xenstore",
                                (xs_dir() / "socket").string(),
                                "--control-socket",
                                (dir_.path() / "ctl.sock").string(),
                                "--state-dir",
                                (dir_.path() / "state").string(),
                                "--log-target",
                                "stderr"};
  argv.insert(argv.end(), options.daemon_args.begin(), options.daemon_args.end());
  // `ip netns exec` execs the command: the pid is the daemon's own.
  daemon_ = std::make_unique<child_process>(argv, logs() / "unetbackd.log",
                                            std::vector<std::string>{asan_options()});
  if (!wait_until([&] { return std::filesystem::exists(dir_.path() / "ctl.sock"); },
                  state_timeout)) {
    throw std::runtime_error("unetbackd did not create its control socket:\n" + daemon_log());
  }
}

std::optional<std::string> world::read(const std::string& path) {
  return xs_->read(path);
}

bool world::wait_value(const std::string& path, const std::string& value,
                       std::chrono::milliseconds timeout) {
  return wait_until([&] { return read(path) == value; }, timeout);
}

std::string world::backend_path(domid d) {
  return fmt::format("/local/domain/0/backend/vif/{}/0", d.value());
}

std::string world::error_node(domid d) {
  return fmt::format("/local/domain/0/error/backend/vif/{}/0/error", d.value());
}

std::optional<int> world::backend_state(domid d) {
  const auto v = read(backend_path(d) + "/state");
  if (!v) {
    return std::nullopt;
  }
  try {
    return std::stoi(*v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void world::domain_create(domid d) {
  const int rc = run_command({bin("sim-xl").string(), "--xenstore", (xs_dir() / "socket").string(),
                              "domain-create", std::to_string(d.value())},
                             logs() / "sim-xl.log");
  if (rc != 0) {
    throw std::runtime_error(fmt::format("sim-xl domain-create {} failed", d.value()));
  }
}

void world::network_attach(domid d, const std::string& mac, unsigned devid) {
  const int rc =
      run_command({"ip", "netns", "exec", host_ns_, bin("sim-xl").string(), "--xenstore",
                   (xs_dir() / "socket").string(), "network-attach", std::to_string(d.value()),
                   std::string("bridge=") + bridge(), "mac=" + mac, fmt::format("devid={}", devid)},
                  logs() / "sim-xl.log", 60s);
  if (rc != 0) {
    throw std::runtime_error(fmt::format("sim-xl network-attach {} failed:\n{}\n{}", d.value(),
                                         read_file(logs() / "sim-xl.log"), daemon_log()));
  }
}

std::uint64_t world::daemon_rss_kib() const {
  std::ifstream in(fmt::format("/proc/{}/status", daemon_->pid()));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stoull(line.substr(6));
    }
  }
  return 0;
}

std::string world::daemon_log() const {
  return read_file(logs() / "unetbackd.log");
}

bool world::wait_log(const std::string& needle, std::chrono::milliseconds timeout) {
  return wait_until([&] { return daemon_log().find(needle) != std::string::npos; }, timeout, 50ms);
}

std::string world::sanitizer_report() const {
  const std::string log = daemon_log();
  for (const char* marker : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                             "runtime error:", "WARNING: ThreadSanitizer"}) {
    const auto at = log.find(marker);
    if (at != std::string::npos) {
      return log.substr(at, 4000);
    }
  }
  return {};
}

nlohmann::json world::ctl_json(const std::string& command, const std::string& vif) {
  const auto out = capture_command({bin("unetbackctl").string(), "--socket",
                                    (dir_.path() / "ctl.sock").string(), command, vif, "--json"},
                                   logs() / "unetbackctl.log", 10s);
  if (!out) {
    return nullptr;
  }
  return nlohmann::json::parse(*out, nullptr, /*allow_exceptions=*/false);
}

nlohmann::json world::stats(domid d) {
  return stats(fmt::format("vif{}.0", d.value()));
}

nlohmann::json world::stats(const std::string& vif) {
  return ctl_json("stats", vif);
}

nlohmann::json world::hash(domid d) {
  return ctl_json("hash", fmt::format("vif{}.0", d.value()));
}

std::uint64_t world::counter(domid d, const std::string& name) {
  return sum_field(stats(d), name);
}

int world::stop_daemon() {
  return daemon_->terminate(20s);
}

nlohmann::json world::host_link_stats(const std::string& ifname) {
  const auto out = capture_command(
      {"ip", "-n", host_ns_, "-s", "-j", "link", "show", "dev", ifname}, logs() / "world.log", 10s);
  if (!out) {
    return nullptr;
  }
  auto j = nlohmann::json::parse(*out, nullptr, false);
  return j.is_array() && !j.empty() ? j[0] : nlohmann::json();
}

std::uint64_t sum_field(const nlohmann::json& j, const std::string& name) {
  std::uint64_t sum = 0;
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == name && value.is_number_unsigned()) {
        sum += value.get<std::uint64_t>();
      } else if (key == name && value.is_number_integer() && value.get<std::int64_t>() > 0) {
        sum += static_cast<std::uint64_t>(value.get<std::int64_t>());
      } else if (key != "total" && key != "totals") {
        sum += sum_field(value, name);
      }
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      sum += sum_field(v, name);
    }
  }
  return sum;
}

}  // namespace unetback::hostile
