// The control socket's replies about vifs, rendered from status values:
// unetbackctl (list, stats, dump, hash and their --json) reads these keys.
#include "unetback/ctl/status_json.hpp"

#include <gtest/gtest.h>

namespace unetback::ctl {
namespace {

using nlohmann::json;

control::vif_status connected_vif() {
  control::vif_status v;
  v.id = control::vif_id{domid{3}, 1};
  v.state = control::xenbus_state::connected;
  v.tap = "vif3.1";
  control::queue_status q{queue_index{0}, {}, "Queue 0\n  tx: req_prod 4"};
  q.counters.tx_packets = 12;
  q.counters.rx_bytes = 3000;
  v.queues = {q};
  return v;
}

TEST(StatusJson, ListEntryOfAnEnabledVif) {
  const json j = list_entry(connected_vif());
  EXPECT_EQ(j, json::parse(R"({"name": "vif3.1", "domid": 3, "devid": 1, "state": "Connected",
    "tap": "vif3.1", "failed": false, "fault_kind": "", "disabled": false,
    "disabled_reason": "", "queues": 1})"));
}

TEST(StatusJson, ListEntrySaysWhoseFaultStoppedTheVif) {
  control::vif_status v = connected_vif();
  v.failure = control::vif_failure{datapath::fault_kind::host, "queue 0: TAP: gone"};
  const json j = list_entry(v);
  EXPECT_EQ(j["failed"], true);
  EXPECT_EQ(j["fault_kind"], "host");
  EXPECT_EQ(j["disabled"], true);
  EXPECT_EQ(j["disabled_reason"], "host fault: queue 0: TAP: gone");
  v.disabled_by = "operator";  // the operator's reason is the one shown
  EXPECT_EQ(list_entry(v)["disabled_reason"], "operator");
}

TEST(StatusJson, StatsEntryCarriesEveryCounterAndTheControlRingsOnlyWithOne) {
  control::vif_status v = connected_vif();
  json j = stats_entry(v);
  ASSERT_EQ(j["queues"].size(), 1U);
  const json& counters = j["queues"][0]["counters"];
  EXPECT_EQ(counters["tx_packets"], 12);
  EXPECT_EQ(counters["rx_bytes"], 3000);
  std::size_t n = 0;
  datapath::queue_counters_snapshot{}.for_each_field(
      [&](std::string_view name, std::uint64_t) { n += counters.contains(std::string(name)); });
  EXPECT_EQ(n, counters.size());  // every counter, nothing else
  EXPECT_FALSE(j.contains("ctrl"));
  v.ctrl = datapath::ctrl_ring_counters{5, 0, 2, 0, 6, 1};
  j = stats_entry(v);
  EXPECT_EQ(j["ctrl"]["requests"], 5);
  EXPECT_EQ(j["ctrl"]["invalid_parameter"], 2);
  EXPECT_EQ(j["ctrl"]["event_storm_backoffs"], 1);
}

TEST(StatusJson, StatsEntryCarriesTheDirectPathOnlyWhereOffered) {
  control::vif_status v = connected_vif();
  EXPECT_FALSE(stats_entry(v).contains("direct"));
  direct::direct_counts c;
  c.tx_packets = 4;
  c.rx_bytes = 900;
  c.tx_drops_full = 2;
  c.learning_frames = 6;
  c.to_host[static_cast<std::size_t>(direct::route_reason::group_destination)] = 3;
  v.direct = control::direct_status{{control::vif_id{domid{2}, 0}}, {c}};
  const json j = stats_entry(v)["direct"];
  EXPECT_EQ(j["peers"], json::array({"vif2.0"}));
  ASSERT_EQ(j["queues"].size(), 1U);
  EXPECT_EQ(j["queues"][0]["tx_packets"], 4);
  EXPECT_EQ(j["queues"][0]["rx_bytes"], 900);
  EXPECT_EQ(j["queues"][0]["tx_drops_full"], 2);
  EXPECT_EQ(j["queues"][0]["learning_frames"], 6);
  EXPECT_EQ(j["queues"][0]["to_host"]["group"], 3);
  EXPECT_EQ(j["queues"][0]["to_host"]["spoofed_source"], 0);
  EXPECT_FALSE(j["queues"][0]["to_host"].contains("direct"));
}

TEST(StatusJson, DumpEntryIsTheRingText) {
  const json j = dump_entry(connected_vif());
  EXPECT_EQ(j, json::parse(R"({"name": "vif3.1",
    "queues": [{"queue": 0, "dump": "Queue 0\n  tx: req_prod 4"}]})"));
}

TEST(StatusJson, HashEntryNamesTheTypesAndCutsTheMappingToItsSize) {
  control::hash_status h;
  h.config.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
  h.config.flags = XEN_NETIF_CTRL_HASH_TYPE_IPV4 | XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP;
  h.config.key[0] = 0x6d;
  h.config.mapping_size = 3;
  h.config.mapping[1] = 1;
  h.generation = 2;
  h.num_queues = 2;
  const json j = hash_entry(h);
  EXPECT_EQ(j["configured"], true);
  EXPECT_EQ(j["algorithm"], "toeplitz");
  EXPECT_EQ(j["types"], json::parse(R"(["ipv4", "ipv4+tcp"])"));
  EXPECT_EQ(j["key"].get<std::string>().substr(0, 4), "6d00");
  EXPECT_EQ(j["mapping"], json::parse("[0, 1, 0]"));
  EXPECT_EQ(j["num_queues"], 2);
  EXPECT_EQ(j["steered"], false);
  h.steered = true;
  EXPECT_EQ(hash_entry(h)["steered"], true);
  EXPECT_EQ(hash_entry(control::hash_status{})["configured"], false);
}

}  // namespace
}  // namespace unetback::ctl
