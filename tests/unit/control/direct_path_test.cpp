// control::direct_path over fake host facts and two vifs of one queue each,
// their direct ports over socketpairs: which pairs it pairs, and when it asks
// a paired guest's queues for a learning frame (fdb_refresh.hpp).

#include "unetback/control/direct_path.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <map>
#include <memory>
#include <string>

#include "queue_end.hpp"
#include "unetback/direct/fdb_refresh.hpp"

namespace unetback::control {
namespace {

using direct::test::a_to_b;
using direct::test::queue_end;

/// The host as the test says it is: every port eligible until a test changes it.
class fake_facts final : public direct_facts_source {
 public:
  std::map<std::string, direct::port_facts> ports;
  direct::bridge_facts bridge_facts;

  direct::filter_facts filters() override { return {}; }
  direct::port_facts port(std::string_view ifname, const tap::mac_address& /*guest_mac*/,
                          const direct::filter_facts& /*filters*/) override {
    return ports.at(std::string(ifname));
  }
  direct::bridge_facts bridge(std::string_view /*bridge*/,
                              const direct::filter_facts& /*filters*/) override {
    return bridge_facts;
  }
};

direct::port_facts eligible_port() {
  direct::port_facts p;
  p.bridge = "xenbr0";
  p.forwarding = true;
  p.fdb_age_cs = 0;
  return p;
}

class DirectPathControl : public ::testing::Test {
 protected:
  DirectPathControl() {
    auto facts = std::make_unique<fake_facts>();
    facts_ = facts.get();
    facts_->ports["vif1.0"] = eligible_port();
    facts_->ports["vif2.0"] = eligible_port();
    facts_->bridge_facts.ageing_time_cs = 30000;  // the bridge's default, 300 s
    path_ = std::make_unique<direct_path>(io_.get_executor(), std::move(facts),
                                          direct_path_options{std::chrono::hours(1), 1 << 20});
  }

  void add_both() {
    path_->add(a_, vif(direct::test::guest_a, qa, "vif1.0"));
    path_->add(b_, vif(direct::test::guest_b, qb, "vif2.0"));
  }

  static direct_vif vif(const tap::mac_address& mac, const queue_end& q, std::string name) {
    direct_vif v;
    v.guest_mac = mac;
    v.ports = {q.port.get()};
    v.ifname = [name] { return name; };
    return v;
  }

  /// A's guest sends one frame to B's: what reached the host through A's TAP first.
  direct::test::frame a_sends_to_b() {
    const auto f = a_to_b(100);
    EXPECT_GT(qa.write(f), 0);
    auto host = qa.host_received();
    EXPECT_EQ(qb.read(), f) << "the frame did not go direct";
    return host;
  }

  // The ports outlive the control plane, which unpublishes their tables.
  const queue_end qa;
  const queue_end qb;
  boost::asio::io_context io_;
  fake_facts* facts_ = nullptr;
  std::unique_ptr<direct_path> path_;
  const vif_id a_{domid{1}, 0};
  const vif_id b_{domid{2}, 0};
};

TEST_F(DirectPathControl, PairsEligibleVifsWithoutLearningFramesWhileTheBridgeHearsThem) {
  add_both();
  ASSERT_TRUE(path_->paired(a_, b_));
  EXPECT_TRUE(a_sends_to_b().empty()) << "a learning frame for an entry 0 s old";
  EXPECT_EQ(qa.port->counters().learning_frames.load(), 0U);
}

TEST_F(DirectPathControl, AsksAPairedGuestsQueuesForALearningFrameOnceItsEntryAges) {
  add_both();
  facts_->ports["vif1.0"].fdb_age_cs = 9999;  // not yet a third of 300 s
  path_->probe();
  EXPECT_TRUE(a_sends_to_b().empty());
  facts_->ports["vif1.0"].fdb_age_cs = 10000;
  path_->probe();
  const auto learning = direct::make_learning_frame(direct::test::guest_a);
  EXPECT_EQ(a_sends_to_b(), direct::test::frame(learning.begin(), learning.end()));
  EXPECT_TRUE(a_sends_to_b().empty()) << "one request, one learning frame";
  EXPECT_EQ(qb.port->counters().learning_frames.load(), 0U) << "B's entry is young";
}

TEST_F(DirectPathControl, APeersMtuLoweredOnTheHostSendsItsLargerFramesToTheHost) {
  add_both();  // both TAPs' MTU 1500 when they connected
  ASSERT_TRUE(path_->paired(a_, b_));
  const auto big = a_to_b(1400);  // an IPv4 packet of 1428 bytes
  EXPECT_GT(qa.write(big), 0);
  EXPECT_EQ(qb.read(), big) << "fits 1500: direct";
  facts_->ports["vif2.0"].mtu = 1300;  // ip link set vif2.0 mtu 1300
  path_->probe();
  ASSERT_TRUE(path_->paired(a_, b_)) << "an MTU is no pairing rule";
  EXPECT_GT(qa.write(big), 0);
  EXPECT_EQ(qa.host_received(), big) << "the bridge, not the daemon, must see it";
  EXPECT_TRUE(qb.read().empty());
  const auto mtu = static_cast<std::size_t>(direct::route_reason::exceeds_peer_mtu);
  EXPECT_EQ(qa.port->counters().to_host[mtu].load(), 1U);
  const auto small = a_to_b(1200);
  EXPECT_GT(qa.write(small), 0);
  EXPECT_EQ(qb.read(), small) << "what fits 1300 still goes direct";
}

TEST_F(DirectPathControl, AnUnpairedGuestIsNotAskedForLearningFrames) {
  facts_->ports["vif1.0"].forwarding = false;
  facts_->ports["vif1.0"].fdb_age_cs = 20000;
  add_both();
  ASSERT_FALSE(path_->paired(a_, b_));
  const auto f = a_to_b(100);
  EXPECT_GT(qa.write(f), 0);
  EXPECT_EQ(qa.host_received(), f) << "the frame, and nothing before it, went to the host";
  EXPECT_EQ(qa.port->counters().learning_frames.load(), 0U);
}

}  // namespace
}  // namespace unetback::control
