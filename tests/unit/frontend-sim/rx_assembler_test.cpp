// Reassembling guest RX packets from response slots (docs/protocol.md §3.4).
#include <gtest/gtest.h>

#include <cstring>

#include "unetback/sim/netfront/rx_assembler.hpp"

namespace unetback::sim {
namespace {

rings::rx_response data(std::int16_t status, std::uint16_t flags = 0, std::uint16_t offset = 0) {
  rings::rx_response r{};
  r.status = status;
  r.flags = flags;
  r.offset = offset;
  return r;
}

rings::rx_response extra(std::uint8_t type, std::uint8_t flags = 0) {
  rings::extra_info e{};
  e.type = type;
  e.flags = flags;
  e.u.gso.size = 1448;
  e.u.gso.type = rings::gso_type::tcpv4;
  rings::rx_response r{};
  std::memcpy(&r, &e, sizeof r);
  return r;
}

using st = rx_assembler::state;

TEST(RxAssembler, SingleSlotPacketCompletes) {
  rx_assembler a;
  ASSERT_EQ(a.feed(5, data(60, rings::rx_flags::data_validated)), st::complete);
  EXPECT_EQ(a.packet().total, 60U);
  EXPECT_EQ(a.packet().fragments, 1U);
  EXPECT_EQ(a.packet().frag[0].ring_index, 5U);
  EXPECT_EQ(a.packet().flags, rings::rx_flags::data_validated);
}

TEST(RxAssembler, PacketLengthIsTheSumOfDataSlots) {
  rx_assembler a;
  EXPECT_EQ(a.feed(0, data(4096, rings::rx_flags::more_data)), st::need_more);
  EXPECT_EQ(a.feed(1, data(4096, rings::rx_flags::more_data)), st::need_more);
  ASSERT_EQ(a.feed(2, data(808)), st::complete);
  EXPECT_EQ(a.packet().total, 9000U);
  EXPECT_EQ(a.packet().fragments, 3U);
  EXPECT_EQ(a.packet().slots, 3U);
}

TEST(RxAssembler, GsoExtraFollowsTheFirstSlot) {
  rx_assembler a;
  EXPECT_EQ(a.feed(0, data(4000, rings::rx_flags::extra_info | rings::rx_flags::more_data |
                                     rings::rx_flags::csum_blank)),
            st::need_more);
  EXPECT_EQ(a.feed(1, extra(rings::extra_type::gso)), st::need_more);
  ASSERT_EQ(a.feed(2, data(1000)), st::complete);
  EXPECT_TRUE(a.packet().has_gso);
  EXPECT_EQ(a.packet().gso.u.gso.size, 1448);
  EXPECT_EQ(a.packet().total, 5000U);
  EXPECT_EQ(a.packet().fragments, 2U);
  EXPECT_EQ(a.packet().slots, 3U);
}

TEST(RxAssembler, ChainedExtrasAreAllConsumed) {
  rx_assembler a;
  EXPECT_EQ(a.feed(0, data(100, rings::rx_flags::extra_info)), st::need_more);
  EXPECT_EQ(a.feed(1, extra(rings::extra_type::hash, rings::extra_flag_more)), st::need_more);
  EXPECT_EQ(a.feed(2, extra(rings::extra_type::gso)), st::complete);
  EXPECT_EQ(a.packet().slots, 3U);
}

TEST(RxAssembler, ErrorSlotFailsThePacketAfterItsLastSlot) {
  rx_assembler a;
  EXPECT_EQ(a.feed(0, data(rings::netif_rsp::error, rings::rx_flags::more_data)), st::need_more);
  EXPECT_EQ(a.feed(1, data(100)), st::failed);
  EXPECT_EQ(a.error(), rx_error::slot_status);
  a.reset();
  EXPECT_EQ(a.feed(2, data(10)), st::complete);
}

TEST(RxAssembler, SlotOverrunningItsPageFails) {
  rx_assembler a;
  EXPECT_EQ(a.feed(0, data(200, 0, 4000)), st::failed);
  EXPECT_EQ(a.error(), rx_error::slot_overrun);
}

TEST(RxAssembler, EndlessMoreDataChainFails) {
  rx_assembler a;
  st s = st::need_more;
  for (std::uint32_t i = 0; i <= max_rx_data_slots; ++i) {
    s = a.feed(i, data(10, rings::rx_flags::more_data));
  }
  EXPECT_EQ(s, st::need_more);  // still consuming the chain
  EXPECT_EQ(a.feed(100, data(10)), st::failed);
  EXPECT_EQ(a.error(), rx_error::too_many_slots);
}

TEST(RxAssembler, UnknownExtraTypeFails) {
  rx_assembler a;
  EXPECT_EQ(a.feed(0, data(100, rings::rx_flags::extra_info)), st::need_more);
  EXPECT_EQ(a.feed(1, extra(rings::extra_type::none)), st::failed);
  EXPECT_EQ(a.error(), rx_error::bad_extra);
}

}  // namespace
}  // namespace unetback::sim
