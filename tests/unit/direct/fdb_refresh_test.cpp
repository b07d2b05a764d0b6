// When a paired guest's queue writes a learning frame, and what it looks like
// (fdb_refresh.hpp).

#include "unetback/direct/fdb_refresh.hpp"

#include <gtest/gtest.h>

#include "test_guests.hpp"

namespace unetback::direct {
namespace {

port_facts learned(std::uint32_t age_cs) {
  port_facts p;
  p.fdb_age_cs = age_cs;
  return p;
}

bridge_facts ageing(std::uint32_t cs) {
  bridge_facts b;
  b.ageing_time_cs = cs;
  return b;
}

TEST(FdbRefresh, DueOnceTheEntryIsAThirdOfTheAgeingTimeOld) {
  EXPECT_FALSE(fdb_refresh_due(learned(0), ageing(30000)));
  EXPECT_FALSE(fdb_refresh_due(learned(9999), ageing(30000)));
  EXPECT_TRUE(fdb_refresh_due(learned(10000), ageing(30000)));
  EXPECT_TRUE(fdb_refresh_due(learned(29999), ageing(30000)));
}

TEST(FdbRefresh, NotDueWhereTheBridgeGivesNoEntryOrEntriesDoNotAge) {
  const port_facts elsewhere;  // another port's, or expired: the pair is off anyway
  EXPECT_FALSE(fdb_refresh_due(elsewhere, ageing(30000)));
  EXPECT_FALSE(fdb_refresh_due(learned(20000), ageing(0)));
}

TEST(FdbRefresh, TheLearningFrameGoesFromTheGuestToItself) {
  const learning_frame f = make_learning_frame(test::guest_a);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(static_cast<std::uint8_t>(f[i]), test::guest_a[i]) << "destination byte " << i;
    EXPECT_EQ(static_cast<std::uint8_t>(f[6 + i]), test::guest_a[i]) << "source byte " << i;
  }
  EXPECT_EQ(static_cast<std::uint8_t>(f[12]), 0x88);
  EXPECT_EQ(static_cast<std::uint8_t>(f[13]), 0xB5);
  EXPECT_EQ(f.size(), 60U);
  EXPECT_EQ(static_cast<std::uint8_t>(f[59]), 0);
}

}  // namespace
}  // namespace unetback::direct
