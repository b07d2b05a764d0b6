// Splitting a guest frame into netif TX slots (docs/protocol.md §3.3).
#include <gtest/gtest.h>

#include <cstring>

#include "unetback/sim/netfront/tx_slots.hpp"

namespace unetback::sim {
namespace {

constexpr backend_tx_features all{true, true, true};

std::array<grant_ref, max_tx_data_slots> refs() {
  std::array<grant_ref, max_tx_data_slots> r{};
  for (std::uint32_t i = 0; i < max_tx_data_slots; ++i) {
    r[i] = grant_ref{100 + i};
  }
  return r;
}
std::array<std::uint16_t, max_tx_data_slots> ids() {
  std::array<std::uint16_t, max_tx_data_slots> r{};
  for (std::uint16_t i = 0; i < max_tx_data_slots; ++i) {
    r[i] = static_cast<std::uint16_t>(7 + i);
  }
  return r;
}

TEST(TxSlots, SmallFrameTakesOneSlotCarryingTheTotalSize) {
  const auto plan = plan_tx(60, rings::vnet_header{}, all);
  ASSERT_TRUE(plan);
  const auto slots = build_tx_slots(plan.value(), refs(), ids());
  ASSERT_EQ(slots.count, 1U);
  EXPECT_EQ(slots.entries[0].size, 60);
  EXPECT_EQ(slots.entries[0].flags, 0);
  EXPECT_EQ(slots.entries[0].gref, 100U);
  EXPECT_EQ(slots.entries[0].id, 7);
  EXPECT_EQ(slots.entries[0].offset, 0);
}

TEST(TxSlots, JumboFrameIsChainedWithMoreDataAndPerSlotSizes) {
  const auto plan = plan_tx(9000, rings::vnet_header{}, all);
  ASSERT_TRUE(plan);
  const auto slots = build_tx_slots(plan.value(), refs(), ids());
  ASSERT_EQ(slots.count, 3U);
  EXPECT_EQ(slots.entries[0].size, 9000);  // first slot: the whole packet
  EXPECT_EQ(slots.entries[1].size, 4096);
  EXPECT_EQ(slots.entries[2].size, 9000 - 2 * 4096);
  EXPECT_EQ(slots.entries[0].flags, rings::tx_flags::more_data);
  EXPECT_EQ(slots.entries[1].flags, rings::tx_flags::more_data);
  EXPECT_EQ(slots.entries[2].flags, 0);
  EXPECT_EQ(slots.entries[2].gref, 102U);
}

TEST(TxSlots, LargestFrameFitsInSixteenSlots) {
  const auto plan = plan_tx(65535, rings::vnet_header{}, all);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan.value().data_slots, 16U);
  EXPECT_EQ(plan.value().data_len[15], 65535 - 15 * 4096);
}

// GPLPV and old netfronts: buffers smaller than a page give the largest TSO
// frame 19 slots, the most Linux netback accepts.
TEST(TxSlots, SmallestSlotStrideGivesTheLargestFrameNineteenSlots) {
  const auto plan = plan_tx(65535, rings::vnet_header{}, all, min_tx_slot_bytes);
  ASSERT_TRUE(plan);
  EXPECT_EQ(min_tx_slot_bytes, 3450U);
  EXPECT_EQ(plan.value().data_slots, 19U);
  EXPECT_EQ(plan.value().slot_bytes, 3450);
  EXPECT_EQ(plan.value().data_len[17], 3450);
  EXPECT_EQ(plan.value().data_len[18], 65535 - 18 * 3450);
  const auto slots = build_tx_slots(plan.value(), refs(), ids());
  ASSERT_EQ(slots.count, 19U);
  EXPECT_EQ(slots.entries[0].size, 65535);
  EXPECT_EQ(slots.entries[1].size, 3450);
  EXPECT_EQ(slots.entries[18].size, 65535 - 18 * 3450);
  EXPECT_EQ(slots.entries[18].flags, 0);
  EXPECT_EQ(slots.entries[17].flags, rings::tx_flags::more_data);
}

TEST(TxSlots, SlotStrideIsClampedBetweenTheLeastAndAPage) {
  const auto tiny = plan_tx(65535, rings::vnet_header{}, all, 100);
  ASSERT_TRUE(tiny);
  EXPECT_EQ(tiny.value().data_slots, max_tx_data_slots);
  const auto huge = plan_tx(65535, rings::vnet_header{}, all, 100000);
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge.value().data_slots, 16U);
}

TEST(TxSlots, PartialChecksumBecomesCsumBlankAndDataValidated) {
  rings::vnet_header v{};
  v.flags = rings::vnet_f_needs_csum;
  EXPECT_EQ(plan_tx(100, v, all).value().first_flags,
            rings::tx_flags::csum_blank | rings::tx_flags::data_validated);
  v.flags = rings::vnet_f_data_valid;
  EXPECT_EQ(plan_tx(100, v, all).value().first_flags, rings::tx_flags::data_validated);
}

TEST(TxSlots, GsoFrameGetsAnExtraRightAfterTheFirstSlot) {
  rings::vnet_header v{};
  v.flags = rings::vnet_f_needs_csum;
  v.gso_type = rings::vnet_gso_tcpv6 | rings::vnet_gso_ecn;
  v.gso_size = 1440;
  const auto plan = plan_tx(5000, v, all);
  ASSERT_TRUE(plan);
  const auto slots = build_tx_slots(plan.value(), refs(), ids());
  ASSERT_EQ(slots.count, 3U);
  EXPECT_EQ(slots.entries[0].flags & rings::tx_flags::extra_info, rings::tx_flags::extra_info);
  EXPECT_EQ(slots.entries[0].flags & rings::tx_flags::more_data, rings::tx_flags::more_data);
  rings::extra_info extra{};
  std::memcpy(&extra, &slots.entries[1], sizeof extra);
  EXPECT_EQ(extra.type, rings::extra_type::gso);
  EXPECT_EQ(extra.flags, 0);
  EXPECT_EQ(extra.u.gso.size, 1440);
  EXPECT_EQ(extra.u.gso.type, rings::gso_type::tcpv6);
  EXPECT_EQ(slots.entries[2].size, 5000 - 4096);
}

TEST(TxSlots, FramesTheBackendCannotTakeAreRefused) {
  rings::vnet_header plain{};
  EXPECT_EQ(plan_tx(13, plain, all).error(), tx_plan_error::too_short);
  EXPECT_EQ(plan_tx(65536, plain, all).error(), tx_plan_error::too_large);
  EXPECT_EQ(plan_tx(5000, plain, backend_tx_features{}).error(), tx_plan_error::needs_sg);
  rings::vnet_header gso{};
  gso.gso_type = rings::vnet_gso_tcpv4;
  gso.gso_size = 1400;
  EXPECT_EQ(plan_tx(3000, gso, backend_tx_features{true, false, true}).error(),
            tx_plan_error::gso_unsupported);
  gso.gso_type = rings::vnet_gso_udp;
  EXPECT_EQ(plan_tx(3000, gso, all).error(), tx_plan_error::gso_unsupported);
  gso.gso_type = rings::vnet_gso_tcpv4;
  gso.gso_size = 0;
  EXPECT_EQ(plan_tx(3000, gso, all).error(), tx_plan_error::bad_gso);
}

}  // namespace
}  // namespace unetback::sim
