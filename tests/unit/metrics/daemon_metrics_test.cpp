// The daemon's metric families from a status as supervisor::status() gives
// it: names, labels, HELP/TYPE for every
// family, and values that follow the counters.
#include "unetback/metrics/daemon_metrics.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "unetback/datapath/queue_counters.hpp"

namespace unetback::metrics {
namespace {

using control::xenbus_state;
using datapath::fault_kind;

// A queue with every counter the daemon keeps, each set to `base` + its
// position (so that no two counters share a value).
control::queue_status queue_status(unsigned index, std::uint64_t base) {
  control::queue_status q{queue_index{index}, {}, "Queue dump text"};
  std::uint64_t i = 0;
#define UNETBACK_SET_COUNTER(name, doc) q.counters.name = base + i++;
  UNETBACK_QUEUE_COUNTERS(UNETBACK_SET_COUNTER)
#undef UNETBACK_SET_COUNTER
  return q;
}

control::daemon_status status(std::uint64_t base, bool disabled,
                              std::optional<fault_kind> fault = std::nullopt) {
  control::vif_status v;
  v.id = control::vif_id{domid{3}, 0};
  v.state = xenbus_state::connected;
  v.tap = "vif3.0";
  if (fault) {
    v.failure = control::vif_failure{*fault, "queue 0: TAP: gone"};
  }
  if (disabled) {
    v.disabled_by = "operator";
  }
  v.queues = {queue_status(0, base), queue_status(1, base + 1000)};
  v.ctrl = datapath::ctrl_ring_counters{7, 1, 2, 0, 9, 4};
  return {domid{0}, 1, {v}};
}

// The text's samples: "name{labels}" -> value. Checks the format on the way:
// every sample belongs to the family whose HELP and TYPE came just before it.
std::map<std::string, std::string> samples(const std::string& text) {
  std::map<std::string, std::string> out;
  std::set<std::string> families;
  std::string family;
  std::istringstream lines(text);
  const std::regex help(R"(# HELP (unetback_[a-z_]+) \S.*)");
  const std::regex type(R"(# TYPE (unetback_[a-z_]+) (counter|gauge))");
  const std::regex sample(R"((unetback_[a-z_]+)(\{[^}]*\})? ([0-9.e+-]+))");
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, m, help)) {
      EXPECT_TRUE(families.insert(m[1]).second) << "family twice: " << m[1];
      family = m[1];
    } else if (std::regex_match(line, m, type)) {
      EXPECT_EQ(m[1], family) << line;
    } else if (std::regex_match(line, m, sample)) {
      EXPECT_EQ(m[1], family) << "sample outside its family: " << line;
      EXPECT_TRUE(out.emplace(std::string(m[1]) + std::string(m[2]), m[3]).second) << line;
    } else {
      ADD_FAILURE() << "not exposition format: " << line;
    }
  }
  return out;
}

constexpr const char* q1 = R"(vif="vif3.0",domid="3",devid="0",queue="1")";

TEST(DaemonMetrics, DaemonFamilies) {
  const auto s = samples(render_daemon_metrics(status(0, false), "1.2.3"));
  EXPECT_EQ(s.at(R"(unetback_build_info{version="1.2.3"})"), "1");
  EXPECT_EQ(s.at("unetback_vifs"), "1");
  EXPECT_EQ(s.at("unetback_vifs_adopted_total"), "1");
}

TEST(DaemonMetrics, VifStateIsAStateSetAndDisabledAGauge) {
  auto s = samples(render_daemon_metrics(status(0, false), "v"));
  const std::string vif = R"(vif="vif3.0",domid="3",devid="0")";
  EXPECT_EQ(s.at("unetback_vif_state{" + vif + R"(,state="Connected"})"), "1");
  EXPECT_EQ(s.at("unetback_vif_state{" + vif + R"(,state="Closing"})"), "0");
  EXPECT_EQ(s.at("unetback_vif_state{" + vif + R"(,state="InitWait"})"), "0");
  EXPECT_EQ(s.at("unetback_vif_disabled{" + vif + "}"), "0");
  EXPECT_EQ(s.at("unetback_vif_frontend_fault{" + vif + "}"), "0");
  EXPECT_EQ(s.at("unetback_vif_queues{" + vif + "}"), "2");
  s = samples(render_daemon_metrics(status(0, true), "v"));
  EXPECT_EQ(s.at("unetback_vif_disabled{" + vif + "}"), "1");
}

// The frontend is blamed only for its own faults, not for a TAP the host deleted.
TEST(DaemonMetrics, FrontendFaultIsOnlyTheFrontendsKind) {
  const std::string vif = R"(vif="vif3.0",domid="3",devid="0")";
  auto s = samples(render_daemon_metrics(status(0, true, fault_kind::frontend), "v"));
  EXPECT_EQ(s.at("unetback_vif_frontend_fault{" + vif + "}"), "1");
  s = samples(render_daemon_metrics(status(0, true, fault_kind::host), "v"));
  EXPECT_EQ(s.at("unetback_vif_frontend_fault{" + vif + "}"), "0");
  EXPECT_EQ(s.at("unetback_vif_disabled{" + vif + "}"), "1");
}

TEST(DaemonMetrics, EveryQueueCounterIsExportedWithItsValue) {
  const control::daemon_status st = status(100, false);
  const auto s = samples(render_daemon_metrics(st, "v"));
  const datapath::queue_counters_snapshot& q = st.vifs[0].queues[1].counters;
  std::size_t seen = 0;
  q.for_each_field([&](std::string_view name, std::uint64_t value) {
    const std::string n(name);
    const std::string want = std::to_string(value);
    std::string key = "unetback_queue_" + n + "_total{" + q1 + "}";
    for (const char* dir : {"tx", "rx"}) {
      const std::string prefix = std::string(dir) + "_drops_";
      if (n.starts_with(prefix)) {
        key = "unetback_queue_" + std::string(dir) + "_drops_total{" + q1 + ",reason=\"" +
              n.substr(prefix.size()) + "\"}";
      }
    }
    if (n == "poll_us") {
      return;  // seconds: below
    }
    ASSERT_TRUE(s.contains(key)) << key;
    EXPECT_EQ(s.at(key), want) << key;
    ++seen;
  });
  EXPECT_GT(seen, 40U);
  EXPECT_EQ(std::stod(s.at(std::string("unetback_queue_poll_seconds_total{") + q1 + "}")),
            static_cast<double>(q.poll_us) / 1e6);
}

TEST(DaemonMetrics, ValuesFollowTheCounters) {
  const std::string key = std::string("unetback_queue_tx_packets_total{") + q1 + "}";
  const auto before = samples(render_daemon_metrics(status(5, false), "v"));
  const auto after = samples(render_daemon_metrics(status(500, false), "v"));
  EXPECT_EQ(std::stoull(after.at(key)) - std::stoull(before.at(key)), 495U);
}

TEST(DaemonMetrics, ControlRingCountersByReason) {
  const auto s = samples(render_daemon_metrics(status(0, false), "v"));
  const std::string vif = R"(vif="vif3.0",domid="3",devid="0")";
  EXPECT_EQ(s.at("unetback_ctrl_requests_total{" + vif + "}"), "7");
  EXPECT_EQ(s.at("unetback_ctrl_rejected_total{" + vif + R"(,reason="invalid_parameter"})"), "2");
  EXPECT_EQ(s.at("unetback_ctrl_events_total{" + vif + "}"), "9");
  EXPECT_EQ(s.at("unetback_ctrl_event_storm_backoffs_total{" + vif + "}"), "4");
}

TEST(DaemonMetrics, NoVifsStillDescribesEveryFamily) {
  const std::string text = render_daemon_metrics(control::daemon_status{}, "v");
  const auto s = samples(text);
  EXPECT_EQ(s.at("unetback_vifs"), "0");
  EXPECT_NE(text.find("# TYPE unetback_queue_tx_packets_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE unetback_vif_disabled gauge\n"), std::string::npos);
}

// A vif without a control ring has no control-ring samples (no made-up zeros).
TEST(DaemonMetrics, NoControlRingNoControlRingSamples) {
  control::daemon_status st = status(0, false);
  st.vifs[0].ctrl.reset();
  const auto s = samples(render_daemon_metrics(st, "v"));
  const std::string vif = R"(vif="vif3.0",domid="3",devid="0")";
  EXPECT_FALSE(s.contains("unetback_ctrl_requests_total{" + vif + "}"));
  EXPECT_TRUE(s.contains(std::string("unetback_queue_tx_bytes_total{") + q1 + "}"));
}

// The direct path's families: samples only for a vif that offers it.
TEST(DaemonMetrics, DirectPathCountersOnlyWhereOffered) {
  control::daemon_status st = status(0, false);
  auto s = samples(render_daemon_metrics(st, "v"));
  const std::string q0 = R"(vif="vif3.0",domid="3",devid="0",queue="0")";
  EXPECT_FALSE(s.contains("unetback_direct_tx_packets_total{" + q0 + "}"));
  direct::direct_counts c;
  c.tx_packets = 11;
  c.rx_bytes = 1500;
  c.tx_drops_full = 2;
  c.learning_frames = 7;
  c.to_host[static_cast<std::size_t>(direct::route_reason::not_a_peer)] = 5;
  st.vifs[0].direct = control::direct_status{{}, {c}};
  s = samples(render_daemon_metrics(st, "v"));
  EXPECT_EQ(s.at("unetback_direct_tx_packets_total{" + q0 + "}"), "11");
  EXPECT_EQ(s.at("unetback_direct_rx_bytes_total{" + q0 + "}"), "1500");
  EXPECT_EQ(s.at("unetback_direct_learning_frames_total{" + q0 + "}"), "7");
  EXPECT_EQ(s.at("unetback_direct_drops_total{" + q0 + R"(,reason="ring_full"})"), "2");
  EXPECT_EQ(s.at("unetback_direct_drops_total{" + q0 + R"(,reason="too_big"})"), "0");
  EXPECT_EQ(s.at("unetback_direct_to_host_total{" + q0 + R"(,reason="not_a_peer"})"), "5");
  EXPECT_FALSE(s.contains("unetback_direct_to_host_total{" + q0 + R"(,reason="direct"})"));
}

}  // namespace
}  // namespace unetback::metrics
