// The named TX attacks of netfront-sim --attack (frontend-sim ring_attack.hpp),
// which the lab runs inside a real domU against unetbackd and the kernel
// netback: on the sim platform each must draw the reaction that the hostile
// tier's own version of the attack asserts (ring_indices, tx_slots, grants).

#include <atomic>
#include <chrono>
#include <thread>
#include <tuple>

#include "harness/hostile_fixture.hpp"
#include "unetback/sim/netfront/ring_attack.hpp"

namespace unetback::hostile {
namespace {

class RingAttack : public hostile_test {
 protected:
  sim::ring_attack_outcome attack(sim::ring_attack a) {
    guest().connect();
    begin_attack();
    return sim::run_ring_attack(guest().device(), a, std::chrono::milliseconds(1000));
  }
};

TEST_F(RingAttack, ProducerOverflowDisablesVif) {
  (void)attack(sim::ring_attack::req_prod_overflow);
  expect_vif_disabled("producer index overflow");
  expect_contained();
}

TEST_F(RingAttack, SlotCrossingAPageDisablesVif) {
  (void)attack(sim::ring_attack::slot_crossing_page);
  expect_vif_disabled("slot crosses a page boundary");
  expect_contained();
}

TEST_F(RingAttack, BadGrantRefIsAnsweredWithAnErrorAndTheVifStays) {
  const auto drops = counter("tx_drops_grant_copy");
  const sim::ring_attack_outcome out = attack(sim::ring_attack::bad_gref);
  EXPECT_EQ(out.statuses, std::vector<std::int16_t>{rings::netif_rsp::error});
  EXPECT_EQ(counter("tx_drops_grant_copy"), drops + 1);
  expect_vif_connected();
  expect_contained();
}

TEST_F(RingAttack, TwentyTwoSlotsDisableVif) {
  (void)attack(sim::ring_attack::twenty_two_slots);
  expect_vif_disabled("malicious number of slots");
  expect_contained();
}

TEST_F(RingAttack, RxProducerOverflowDisablesVif) {
  guest().connect();
  raw_port inject(w().host_ns(), hostile_guest::vif);
  begin_attack();
  // a frame for the guest makes the RX path look at the ring, whatever it
  // does on a bare kick: send some while the attack waits for its answer
  std::atomic<bool> done{false};
  std::thread sender([&] {
    while (!done.load()) {
      inject.send(
          test_frame(parse_mac(hostile_guest::mac), parse_mac("02:00:00:00:00:01"), 100, 1));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  (void)sim::run_ring_attack(guest().device(), sim::ring_attack::rx_req_prod_overflow,
                             std::chrono::milliseconds(1000));
  done.store(true);
  sender.join();
  expect_vif_disabled("producer index overflow");
  expect_contained();
}

TEST_F(RingAttack, KickStormLeavesTheVifConnected) {
  const auto events = counter("events_received");
  const sim::ring_attack_outcome out = attack(sim::ring_attack::kick_storm);
  EXPECT_GT(out.kicks, 0U);
  EXPECT_TRUE(out.statuses.empty());
  EXPECT_GT(counter("events_received"), events);
  expect_vif_connected();
  expect_contained();
}

// netfront-sim --set-key: the lab's XenStore attacks on real Xen go through
// the device's key overrides; here they draw the refusal XenStoreKeys asserts.
TEST_F(RingAttack, KeyOverridesOfTheHandshakeAreRefused) {
  for (const auto& [key, value, fragment] :
       {std::tuple{"multi-queue-num-queues", "999", "multi-queue-num-queues"},
        std::tuple{"tx-ring-ref", "99999999", "ring"},
        std::tuple{"event-channel", "99999", "event"}}) {
    SCOPED_TRACE(key);
    guest().offer({{key, value}});
    EXPECT_TRUE(wait_until(
        [&] {
          guest().pump();
          return guest().backend_state() == 5;
        },
        state_timeout));
    expect_connect_refused(fragment);
    guest().device().close();
    ASSERT_TRUE(guest().wait_backend_state({6}));
    w().xs().rm("/local/domain/0/error/backend/vif/2");
  }
}

TEST(RingAttackNames, EveryNameParsesBackToItsAttack) {
  for (const std::string_view name : sim::ring_attack_names()) {
    const auto a = sim::parse_ring_attack(name);
    ASSERT_TRUE(a) << name;
    EXPECT_EQ(sim::to_string(*a), name);
  }
  EXPECT_FALSE(sim::parse_ring_attack("tx-nonsense"));
}

}  // namespace
}  // namespace unetback::hostile
