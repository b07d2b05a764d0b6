// Lifecycle attacks (XSA-349; docs/protocol.md §1.10, §6.2 items 3-5, 30): a
// frontend that flips its state rapidly (valid and invalid values, so the
// data path connects and disconnects over and over), and one that floods its
// watched `state` node and other keys with writes. The daemon must stay
// bounded in memory and file descriptors, serve the other guest, and connect
// this vif normally afterwards.

#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

class StateFlips : public hostile_test {
 protected:
  std::size_t daemon_fds() {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(
             fmt::format("/proc/{}/fd", w().daemon().pid()), ec);
         !ec && it != std::filesystem::directory_iterator(); ++it) {
      ++n;
    }
    return n;
  }
};

TEST_F(StateFlips, RapidFrontendStateFlipsAreContained) {
  manual_frontend m(guest(), 2, false, false);
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  const std::size_t fds_before = daemon_fds();
  begin_attack();
  const std::vector<std::string> values{"0", "1",  "2",  "3",   "4",  "5",
                                        "6", "7",  "8",  "9",   "-1", "abc",
                                        "",  "4 ", "04", "0x4", "99", "4294967300"};
  std::mt19937 rng(20240417);
  for (int i = 0; i < 3000; ++i) {
    guest().write_state(values[rng() % values.size()]);
  }
  // Settle and connect properly: the vif must not be wedged.
  ASSERT_TRUE(m.rearm()) << "the vif did not re-arm after the flips";
  m.connect();
  EXPECT_TRUE(guest().wait_backend_state({4}));
  EXPECT_TRUE(w().daemon_alive());
  EXPECT_LE(daemon_fds(), fds_before + 8) << "file descriptors leaked across reconnects";
  expect_contained();
}

TEST_F(StateFlips, WatchEventFloodIsContained) {
  manual_frontend m(guest(), 1, false, false);
  begin_attack();
  for (int i = 0; i < 20000; ++i) {
    guest().write_state("1");  // the node the backend watches
    guest().xs().write(guest().frontend_path() + "/junk", std::to_string(i));
  }
  m.connect();
  EXPECT_TRUE(guest().wait_backend_state({4})) << "the vif did not connect after the flood";
  expect_contained();
}

// Several guests flooding watched nodes at once (here: four XenStore
// connections of the hostile guest, each writing its `state` node as fast as
// sim-xenstored answers, ~11,000 events/s). libxenstore queues watch events
// without bound, so the daemon must take them faster than they come: its
// socket and memory must not fill up, and the hostile guest's connect right
// after the flood must be seen at once, not behind a backlog. (This scenario
// found two sim-xenstored bugs: it wrote one message per system call and so
// fell behind itself, then dropped the daemon "for not reading", and freed
// the dropped connection while walking its watches.)
TEST_F(StateFlips, WatchFloodFromSeveralConnectionsLeavesNoBacklog) {
  manual_frontend m(guest(), 1, false, false);
  const auto socket = w().xs_dir() / fmt::format("socket.d{}", hostile_guest::id.value());
  std::vector<std::unique_ptr<xs::client>> writers;
  for (int i = 0; i < 4; ++i) {
    writers.push_back(std::make_unique<xs::client>(xs::client::open(socket.string())));
  }
  begin_attack();
  const auto rss_before = w().daemon_rss_kib();
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> writes{0};
  std::vector<std::thread> threads;
  for (auto& x : writers) {
    threads.emplace_back([&, c = x.get()] {
      while (!stop.load(std::memory_order_relaxed)) {
        c->write(guest().frontend_path() + "/state", "1");
        writes.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(4));
  stop = true;
  for (auto& t : threads) {
    t.join();
  }
  const auto rss_peak = w().daemon_rss_kib();
  const auto flood_end = std::chrono::steady_clock::now();
  m.connect();
  EXPECT_TRUE(guest().wait_backend_state({4})) << "the vif did not connect after the flood";
  const auto lag = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - flood_end);
  std::cerr << "[watch-flood] " << writes.load() << " writes from 4 connections in 4 s; VmRSS "
            << rss_before << " -> " << rss_peak << " KiB; connected " << lag.count()
            << " ms after the flood\n";
  EXPECT_LT(lag, std::chrono::seconds(2)) << "the daemon was still working off the backlog";
  EXPECT_EQ(w().daemon_log().find("XenStore connection lost"), std::string::npos)
      << "sim-xenstored dropped the daemon: its unread watch events passed 1 MiB";
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile

namespace unetback::hostile {
namespace {

class Unplug : public hostile_test {
 protected:
  /// `xl network-detach 2 0` in the host namespace; its exit code.
  int network_detach() {
    return run_command(
        {"ip", "netns", "exec", w().host_ns(), w().bin("sim-xl").string(), "--xenstore",
         (w().xs_dir() / "socket").string(), "network-detach", "2", "0"},
        w().logs() / "sim-xl.log", std::chrono::seconds(60));
  }
  /// vif2.0 still exists in the host namespace.
  bool tap_exists() { return w().host_link_stats(hostile_guest::vif).is_object(); }
};

// The toolstack unplugs the vif while the guest storms its event channel:
// the daemon must stop the queue (join its worker) and go Closing at once;
// the guest stops storming when it sees Closing and closes like a netfront,
// and the whole unplug finishes within libxl's 10 s.
TEST_F(Unplug, DetachDuringAKickStormCompletes) {
  connect_and_drive();
  begin_attack();
  std::atomic<bool> stop{false};
  std::thread storm([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      guest().hostile().kick_storm(0, 200);
    }
  });
  std::atomic<bool> detached{false};
  int rc = -1;
  const auto started = std::chrono::steady_clock::now();
  std::thread detach([&] {
    rc = network_detach();
    detached = true;
  });
  const bool closing = guest().wait_backend_state({5, 6}, std::chrono::seconds(10));
  const auto to_closing = std::chrono::steady_clock::now() - started;
  stop = true;
  storm.join();
  wait_until(
      [&] {
        guest().pump();  // the guest now closes as a netfront does
        return detached.load();
      },
      std::chrono::seconds(30));
  detach.join();
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(closing) << "the backend did not start closing during the storm";
  EXPECT_LT(to_closing, std::chrono::seconds(2)) << "stopping the stormed queue was slow";
  EXPECT_EQ(rc, 0) << "sim-xl network-detach: the backend did not reach Closed in 10 s";
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_TRUE(wait_until([&] { return !tap_exists(); }, state_timeout))
      << "vif2.0 still exists after the unplug";
  expect_contained();
}

// A frontend that ignores the unplug (stays Connected, never closes) cannot
// pin the vif: libxl gives up after 10 s and removes the nodes, and the
// daemon must then destroy the device and free its resources.
TEST_F(Unplug, GuestIgnoringTheUnplugCannotPinTheVif) {
  manual_frontend m(guest(), 2, false, false);
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  begin_attack();
  (void)network_detach();  // 1 after libxl's 10 s wait, or 0 if the daemon closed anyway
  EXPECT_FALSE(w().read(world::backend_path(hostile_guest::id)).has_value());
  EXPECT_TRUE(wait_until([&] { return !tap_exists(); }, state_timeout))
      << "vif2.0 still exists after the toolstack removed the device";
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile

namespace unetback::hostile {
namespace {

class DynamicKeys : public hostile_test {
 protected:
  /// Lines of the daemon's log containing `needle`.
  std::size_t log_lines(const std::string& needle) {
    const std::string log = w().daemon_log();
    std::size_t n = 0;
    for (std::size_t at = log.find(needle); at != std::string::npos;
         at = log.find(needle, at + needle.size())) {
      ++n;
    }
    return n;
  }
  /// Connects the hostile guest (1 queue) and starts the attack.
  void connect_and_begin(manual_frontend& m) {
    m.connect();
    ASSERT_TRUE(guest().wait_backend_state({4}));
    begin_attack();
  }
  /// Writes the hostile guest's request-multicast-control `n` times, 0 and 1 in turn.
  void toggle_multicast_control(int n) {
    for (int i = 0; i < n; ++i) {
      guest().xs().write(guest().frontend_path() + "/request-multicast-control",
                         (i & 1) != 0 ? "1" : "0");
    }
  }
};

// request-multicast-control is watched while connected
// (feature-dynamic-multicast-control). A guest toggling it as fast as it can
// must neither disable anything nor flood the host's log: every line a guest
// can trigger is rate-limited (style rule; §6.2 item 4).
TEST_F(DynamicKeys, MulticastControlTogglingDoesNotFloodTheLog) {
  manual_frontend m(guest(), 1, false, false);
  connect_and_begin(m);
  toggle_multicast_control(5000);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::size_t lines = log_lines("multicast filtering");
  std::cerr << "[dynamic] 5000 toggles -> " << lines << " 'multicast filtering' log lines\n";
  // UNETBACK_LOG_RATELIMITED allows 10 lines per 5 s (+ a "suppressed" note).
  EXPECT_LE(lines, 30U) << "a guest can write host log lines at the rate of its XenStore writes";
  expect_vif_connected();
  expect_contained();
}

// Log limits are per vif (log_limits.hpp): after one guest's toggling has used
// up its bucket for "multicast filtering", the same line about another vif
// must still reach the log. With one bucket per call site for the whole
// daemon, the good guest's lines were suppressed for the next 5 s.
TEST_F(DynamicKeys, OneGuestsLogFloodLeavesAnotherVifsLinesVisible) {
  manual_frontend m(guest(), 1, false, false);
  connect_and_begin(m);
  toggle_multicast_control(2000);
  ASSERT_TRUE(wait_until([&] { return log_lines("vif2.0: multicast filtering") >= 10; },
                         std::chrono::seconds(5)))
      << "the toggles never used up vif2.0's bucket: the scenario tested nothing";
  const std::string good_key = "/local/domain/1/device/vif/0/request-multicast-control";
  w().xs().write(good_key, "1");
  EXPECT_TRUE(w().wait_log("vif1.0: multicast filtering on", std::chrono::seconds(5)))
      << "the hostile guest's flood silenced the good guest's vif";
  w().xs().write(good_key, "0");
  EXPECT_TRUE(w().wait_log("vif1.0: multicast filtering off", std::chrono::seconds(5)));
  expect_vif_connected();
  expect_contained();
}

// A malformed value of the dynamic key is a protocol error for this vif only.
TEST_F(DynamicKeys, MalformedMulticastControlDisablesOnlyThisVif) {
  manual_frontend m(guest(), 1, false, false);
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  begin_attack();
  guest().xs().write(guest().frontend_path() + "/request-multicast-control", "yes");
  EXPECT_TRUE(guest().wait_backend_state({5, 6}));
  const auto error = w().read(world::error_node(hostile_guest::id));
  EXPECT_TRUE(error && error->find("request-multicast-control") != std::string::npos)
      << error.value_or("(no error node)");
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
