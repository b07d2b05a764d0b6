#include "good_guest.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace unetback::hostile {

good_guest::good_guest(world& w, unsigned queues) : world_(w) {
  ns_ = fmt::format("ubhg-{}-{}", w.id(), id.value());
  const auto log = w.logs() / "world.log";
  if (run_command({"ip", "netns", "add", ns_}, log) != 0 ||
      run_command({"ip", "-n", ns_, "link", "set", "lo", "up"}, log) != 0) {
    throw std::runtime_error("creating the good guest's namespace failed");
  }
  w.domain_create(id);
  w.network_attach(id, fmt::format("00:16:3e:00:00:{:02x}", id.value()));
  const auto ready = w.dir() / "good-guest.ready";
  frontend_ = std::make_unique<child_process>(
      // --xenstore-dir first: tests/integration/lib.sh's netfront_pid matches
      // "netfront-sim --domid N " machine-wide; this guest is not theirs.
      std::vector<std::string>{w.bin("netfront-sim").string(), "--xenstore-dir",
                               w.xs_dir().string(), "--domid", std::to_string(id.value()),
                               "--sim-dir", w.sim_dir().string(), "--devid", "0", "--queues",
                               std::to_string(queues), "--netns", ns_, "--ifname", "eth0",
                               "--ready-file", ready.string()},
      w.logs() / "netfront-sim-1.log");
  if (!wait_until([&] { return connected() && std::filesystem::exists(ready); }, state_timeout)) {
    throw std::runtime_error("good guest did not connect:\n" + w.daemon_log());
  }
  if (run_command({"ip", "-n", ns_, "addr", "add", std::string(ip) + "/24", "dev", "eth0"}, log) !=
          0 ||
      run_command({"ip", "-n", ns_, "link", "set", "eth0", "up"}, log) != 0) {
    throw std::runtime_error("configuring the good guest's eth0 failed");
  }
  traffic_ = std::make_unique<traffic_monitor>(ns_, ip, w.host_ns(), world::host_ip());
  // The first probes resolve ARP through the bridge; wait until echoes pass.
  const bool passing =
      wait_until([&] { return traffic_->probe(5, std::chrono::milliseconds(50)).received >= 4; },
                 state_timeout, std::chrono::milliseconds(100));
  if (!passing) {
    throw std::runtime_error("no UDP echo through the good guest's vif");
  }
}

good_guest::~good_guest() {
  traffic_.reset();
  frontend_.reset();
  run_command({"ip", "netns", "del", ns_}, world_.logs() / "world.log");
}

bool good_guest::connected() {
  const std::string fe = fmt::format("/local/domain/{}/device/vif/0/state", id.value());
  return world_.backend_state(id) == 4 && world_.read(fe) == "4";
}

}  // namespace unetback::hostile
