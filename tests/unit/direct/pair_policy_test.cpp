// Which vif pairs may use the direct path (pair_policy.hpp): every host policy
// that could see the difference sends the pair back to the TAP path.

#include "unetback/direct/pair_policy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "reason_names.hpp"

namespace unetback::direct {
namespace {

port_facts open_port(std::uint32_t domid) {
  port_facts p;
  p.domid = domid;
  p.devid = 0;
  p.direct_enabled = true;
  p.bridge = "xenbr0";
  p.forwarding = true;
  p.fdb_age_cs = 0;
  return p;
}

struct PairPolicy : ::testing::Test {
  port_facts a = open_port(1);
  port_facts b = open_port(2);
  bridge_facts bridge;

  pair_reason judged() const { return judge_pair(a, b, bridge).why; }
};

TEST_F(PairPolicy, TwoOpenPortsOnAPlainBridgeAreEligibleBothWays) {
  EXPECT_TRUE(judge_pair(a, b, bridge).eligible());
  EXPECT_TRUE(judge_pair(b, a, bridge).eligible());
}

TEST_F(PairPolicy, AVifIsNeverItsOwnPeer) {
  EXPECT_EQ(judge_pair(a, a, bridge).why, pair_reason::same_vif);
}

TEST_F(PairPolicy, TwoVifsOfOneDomainArePairedLikeAnyOthers) {
  b.domid = a.domid;
  b.devid = 1;
  EXPECT_TRUE(judge_pair(a, b, bridge).eligible());
}

TEST_F(PairPolicy, TheSettingIsNeededOnBothVifs) {
  b.direct_enabled = false;
  const auto v = judge_pair(a, b, bridge);
  EXPECT_EQ(v.why, pair_reason::direct_off);
  EXPECT_TRUE(v.on_second);
  EXPECT_FALSE(judge_pair(b, a, bridge).on_second);
}

TEST_F(PairPolicy, EachPortRuleSendsThePairBackToTheTapPath) {
  const std::vector<std::pair<void (*)(port_facts&), pair_reason>> rules{
      {[](port_facts& p) { p.bridge.clear(); }, pair_reason::not_bridged},
      {[](port_facts& p) { p.forwarding = false; }, pair_reason::port_not_forwarding},
      {[](port_facts& p) { p.isolated = true; }, pair_reason::port_isolated},
      {[](port_facts& p) { p.fdb_age_cs.reset(); }, pair_reason::fdb_disagrees},
      {[](port_facts& p) { p.packet_socket = true; }, pair_reason::packet_socket_open},
      {[](port_facts& p) { p.tc_or_xdp = true; }, pair_reason::tc_or_xdp_attached},
      {[](port_facts& p) { p.netdev_rules = true; }, pair_reason::netdev_rules},
  };
  for (const auto& [breaks, reason] : rules) {
    port_facts broken = open_port(2);
    breaks(broken);
    EXPECT_EQ(judge_pair(a, broken, bridge).why, reason) << to_string(reason);
    EXPECT_EQ(judge_pair(broken, a, bridge).why, reason) << to_string(reason);
  }
}

TEST_F(PairPolicy, VifsOnDifferentBridgesAreNotPaired) {
  b.bridge = "xenbr1";
  EXPECT_EQ(judged(), pair_reason::different_bridges);
}

TEST_F(PairPolicy, EachBridgePolicySendsThePairBackToTheTapPath) {
  bridge.vlan_filtering = true;
  EXPECT_EQ(judged(), pair_reason::vlan_filtering);
  bridge = {};
  bridge.br_netfilter = true;
  EXPECT_EQ(judged(), pair_reason::br_netfilter);
  bridge = {};
  bridge.bridge_rules = true;
  EXPECT_EQ(judged(), pair_reason::bridge_rules);
}

TEST_F(PairPolicy, APortRuleIsReportedBeforeTheBridgesSoTheLogNamesTheVif) {
  bridge.br_netfilter = true;
  b.packet_socket = true;
  const auto v = judge_pair(a, b, bridge);
  EXPECT_EQ(v.why, pair_reason::packet_socket_open);
  EXPECT_TRUE(v.on_second);
}

TEST_F(PairPolicy, EveryReasonHasItsOwnDescription) {
  test::expect_distinct_names(pair_reason::eligible, pair_reason::bridge_rules,
                              "unknown pair reason");
}

}  // namespace
}  // namespace unetback::direct
