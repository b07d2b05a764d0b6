// The named TX attacks of netfront-sim --attack (frontend-sim tx_attack.hpp),
// which the lab runs inside a real domU against unetbackd and the kernel
// netback: on the sim platform each must draw the reaction that the hostile
// tier's own version of the attack asserts (ring_indices, tx_slots, grants).

#include <chrono>

#include "harness/hostile_fixture.hpp"
#include "unetback/sim/netfront/tx_attack.hpp"

namespace unetback::hostile {
namespace {

class TxAttack : public hostile_test {
 protected:
  sim::tx_attack_outcome attack(sim::tx_attack a) {
    guest().connect();
    begin_attack();
    return sim::run_tx_attack(guest().device(), a, std::chrono::milliseconds(1000));
  }
};

TEST_F(TxAttack, ProducerOverflowDisablesVif) {
  (void)attack(sim::tx_attack::req_prod_overflow);
  expect_vif_disabled("producer index overflow");
  expect_contained();
}

TEST_F(TxAttack, SlotCrossingAPageDisablesVif) {
  (void)attack(sim::tx_attack::slot_crossing_page);
  expect_vif_disabled("slot crosses a page boundary");
  expect_contained();
}

TEST_F(TxAttack, BadGrantRefIsAnsweredWithAnErrorAndTheVifStays) {
  const auto drops = counter("tx_drops_grant_copy");
  const sim::tx_attack_outcome out = attack(sim::tx_attack::bad_gref);
  EXPECT_EQ(out.statuses, std::vector<std::int16_t>{rings::netif_rsp::error});
  EXPECT_EQ(counter("tx_drops_grant_copy"), drops + 1);
  expect_vif_connected();
  expect_contained();
}

TEST_F(TxAttack, TwentyTwoSlotsDisableVif) {
  (void)attack(sim::tx_attack::twenty_two_slots);
  expect_vif_disabled("malicious number of slots");
  expect_contained();
}

TEST(TxAttackNames, EveryNameParsesBackToItsAttack) {
  for (const std::string_view name : sim::tx_attack_names()) {
    const auto a = sim::parse_tx_attack(name);
    ASSERT_TRUE(a) << name;
    EXPECT_EQ(sim::to_string(*a), name);
  }
  EXPECT_FALSE(sim::parse_tx_attack("tx-nonsense"));
}

}  // namespace
}  // namespace unetback::hostile
