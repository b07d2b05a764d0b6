#include "hostile_fixture.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace unetback::hostile {

std::vector<std::int16_t> statuses(const std::vector<rings::tx_response>& r) {
  std::vector<std::int16_t> out;
  for (const auto& x : r) {
    out.push_back(x.status);
  }
  return out;
}

rings::extra_info gso_extra(std::uint8_t type, std::uint16_t size, std::uint8_t flags) {
  rings::extra_info e{};
  e.type = rings::extra_type::gso;
  e.flags = flags;
  e.u.gso.size = size;
  e.u.gso.type = type;
  return e;
}

rings::extra_info raw_extra(std::uint8_t type, std::uint8_t flags) {
  rings::extra_info e{};
  e.type = type;
  e.flags = flags;
  return e;
}

rings::extra_info mcast_extra(std::uint8_t type, const mac_bytes& mac, std::uint8_t flags) {
  rings::extra_info e{};
  e.type = type;
  e.flags = flags;
  std::memcpy(e.u.mcast.addr, mac.data(), mac.size());
  return e;
}

void hostile_test::SetUp() {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "the hostile tier needs root (network namespaces, TAP devices)";
  }
  world_ = std::make_unique<world>(world_config());
  good_ = std::make_unique<good_guest>(*world_);
  hostile_ = std::make_unique<hostile_guest>(*world_, hostile_config());
}

void hostile_test::TearDown() {
  if (attack_running_) {
    good_->traffic().stop();
  }
  if (world_) {
    const int status = world_->stop_daemon();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "unetbackd did not exit cleanly on SIGTERM (wait status " << status << ")";
    EXPECT_EQ(world_->sanitizer_report(), "");
    if (HasFailure()) {
      dump_logs();
    }
  }
  tx_.reset();
  hostile_.reset();
  good_.reset();
  world_.reset();
}

void hostile_test::dump_logs() {
  for (const auto& entry : std::filesystem::directory_iterator(world_->logs())) {
    std::ifstream in(entry.path());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
      lines.push_back(line);
    }
    std::cerr << "----- " << entry.path().filename().string() << " (last 60 lines)\n";
    for (std::size_t i = lines.size() > 60 ? lines.size() - 60 : 0; i < lines.size(); ++i) {
      std::cerr << lines[i] << "\n";
    }
  }
}

tx_driver& hostile_test::connect_and_drive() {
  guest().connect();
  tx_ = std::make_unique<tx_driver>(guest(), guest().stopped_queue(0));
  tx_->send_valid();
  const auto r = tx_->responses(1);
  EXPECT_EQ(statuses(r), std::vector<std::int16_t>{rings::netif_rsp::okay})
      << "a valid packet before the attack was not answered OKAY";
  return *tx_;
}

tx_driver& hostile_test::reconnect_and_drive() {
  tx_.reset();
  // The error node of the previous fault goes, so the next one is seen fresh.
  w().xs().rm("/local/domain/0/error/backend/vif/2");
  EXPECT_TRUE(guest().reconnect()) << "the hostile guest could not reconnect after a fault";
  tx_ = std::make_unique<tx_driver>(guest(), guest().stopped_queue(0));
  tx_->send_valid();
  EXPECT_EQ(statuses(tx_->responses(1)), std::vector<std::int16_t>{rings::netif_rsp::okay})
      << "a valid packet after reconnecting was not answered OKAY";
  return *tx_;
}

void hostile_test::begin_attack() {
  rss_before_kib_ = w().daemon_rss_kib();
  log_before_bytes_ = w().daemon_log().size();
  good().traffic().start();
  attack_running_ = true;
}

void hostile_test::expect_contained(std::uint64_t rss_bound_kib) {
  const traffic_result during = good().traffic().stop();
  attack_running_ = false;
  EXPECT_TRUE(w().daemon_alive()) << "unetbackd died during the attack";
  EXPECT_EQ(w().sanitizer_report(), "");
  EXPECT_GE(during.ratio(), 0.75) << "the good guest got " << during.received << " of "
                                  << during.sent << " echoes during the attack";
  const traffic_result after = good().traffic().probe(10, std::chrono::milliseconds(20));
  EXPECT_GE(after.received, 9U) << "the good guest got " << after.received
                                << " of 10 echoes after the attack";
  EXPECT_TRUE(good().connected()) << "the good guest's vif left Connected";
  EXPECT_TRUE(good().alive()) << "the good guest's netfront-sim exited";
  const std::uint64_t rss_after = w().daemon_rss_kib();
  const std::uint64_t growth = rss_after > rss_before_kib_ ? rss_after - rss_before_kib_ : 0;
  EXPECT_LE(growth, rss_bound_kib)
      << "unetbackd VmRSS grew from " << rss_before_kib_ << " to " << rss_after << " KiB";
  const std::size_t log_growth = w().daemon_log().size() - log_before_bytes_;
  EXPECT_LE(log_growth, log_bound_bytes)
      << "the attack made unetbackd write " << log_growth << " bytes of log";
  std::cerr << "[contained] echoes during " << during.received << "/" << during.sent << ", VmRSS "
            << rss_before_kib_ << " -> " << rss_after << " KiB (bound +" << rss_bound_kib
            << "), log +" << log_growth << " bytes\n";
}

void hostile_test::expect_vif_disabled(const std::string& reason, fault_at where) {
  EXPECT_TRUE(guest().wait_backend_state({5, 6}))
      << "backend state stayed " << guest().backend_state().value_or(-1);
  const auto error = w().read(world::error_node(hostile_guest::id));
  EXPECT_TRUE(error && error->find(reason) != std::string::npos)
      << "error node: " << error.value_or("(none)");
  EXPECT_TRUE(w().wait_log(reason)) << "the daemon's log does not say '" << reason << "'";
  if (where == fault_at::queue) {
    EXPECT_GE(counter("faults"), 1U);
  }
}

void hostile_test::expect_connect_refused(const std::string& fragment) {
  EXPECT_TRUE(guest().wait_backend_state({5, 6}))
      << "backend state stayed " << guest().backend_state().value_or(-1);
  std::optional<std::string> error;
  wait_until(
      [&] {
        error = w().read(world::error_node(hostile_guest::id));
        return error.has_value();
      },
      state_timeout);
  EXPECT_TRUE(error && error->find(fragment) != std::string::npos)
      << "error node: " << error.value_or("(none)") << " (expected '" << fragment << "')";
  EXPECT_TRUE(w().wait_log(hostile_guest::vif)) << "the daemon never logged about vif2.0";
}

void hostile_test::expect_vif_connected() {
  EXPECT_EQ(guest().backend_state(), 4);
  EXPECT_EQ(w().read(world::error_node(hostile_guest::id)), std::nullopt);
}

void hostile_test::drop_hostile_guest() {
  tx_.reset();
  hostile_.reset();
}

void hostile_test::isolate_hostile_vif() {
  EXPECT_EQ(w().ip_host({"link", "set", "dev", hostile_guest::vif, "nomaster"}), 0);
}

std::uint64_t hostile_test::counter(const std::string& name) {
  return w().counter(hostile_guest::id, name);
}

bool hostile_test::wait_counter(const std::string& name, std::uint64_t value) {
  return wait_until([&] { return counter(name) >= value; }, state_timeout,
                    std::chrono::milliseconds(100));
}

}  // namespace unetback::hostile
