// The guest-TX parser, one test per rule of docs/protocol.md §3.3 / §6.2
// items 11-17, named after what the guest does.

#include "unetback/rings/tx_parser.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace unetback::rings {
namespace {

tx_request slot(std::uint16_t id, std::uint16_t size, std::uint16_t flags = 0,
                std::uint16_t offset = 0) {
  tx_request r{};
  r.gref = 1000U + id;
  r.offset = offset;
  r.flags = flags;
  r.id = id;
  r.size = size;
  return r;
}

tx_request extra_slot(std::uint8_t type, bool more = false) {
  extra_info e{};
  e.type = type;
  e.flags = more ? extra_flag_more : 0;
  tx_request r{};
  std::memcpy(&r, &e, sizeof(e));
  return r;
}

tx_request gso_slot(std::uint8_t gso, std::uint16_t mss, bool more = false) {
  extra_info e{};
  e.type = extra_type::gso;
  e.flags = more ? extra_flag_more : 0;
  e.u.gso.type = gso;
  e.u.gso.size = mss;
  tx_request r{};
  std::memcpy(&r, &e, sizeof(e));
  return r;
}

tx_request mcast_slot(std::uint8_t type, std::array<std::uint8_t, 6> mac, bool more = false) {
  extra_info e{};
  e.type = type;
  e.flags = more ? extra_flag_more : 0;
  std::memcpy(e.u.mcast.addr, mac.data(), mac.size());
  tx_request r{};
  std::memcpy(&r, &e, sizeof(e));
  return r;
}

/// A packet of `n` data slots: first slot `first_own` bytes, then the given sizes.
std::vector<tx_request> chain(std::uint16_t first_own, const std::vector<std::uint16_t>& rest) {
  std::uint32_t total = first_own;
  for (auto s : rest) {
    total += s;
  }
  std::vector<tx_request> w;
  w.push_back(slot(0, static_cast<std::uint16_t>(total), rest.empty() ? 0 : tx_flags::more_data));
  for (std::size_t i = 0; i < rest.size(); ++i) {
    w.push_back(slot(static_cast<std::uint16_t>(i + 1), rest[i],
                     i + 1 < rest.size() ? tx_flags::more_data : 0));
  }
  return w;
}

/// A packet of `n` data slots of 10 bytes each.
std::vector<tx_request> slots_packet(std::size_t n) {
  return chain(10, std::vector<std::uint16_t>(n - 1, 10));
}

TEST(TxParser, SingleSlotPacketIsAccepted) {
  const std::vector<tx_request> w{
      slot(3, 60, tx_flags::csum_blank | tx_flags::data_validated, 100)};
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  EXPECT_EQ(r.packet.slots, 1U);
  EXPECT_EQ(r.packet.total_size, 60);
  EXPECT_TRUE(r.packet.csum_blank);
  EXPECT_TRUE(r.packet.data_validated);
  ASSERT_EQ(r.packet.segment_count, 1U);
  EXPECT_EQ(r.packet.segments[0].gref, grant_ref(1003));
  EXPECT_EQ(r.packet.segments[0].offset, 100);
  EXPECT_EQ(r.packet.segments[0].size, 60);
}

TEST(TxParser, FollowingSlotSizesAreSubtractedFromTheFirst) {
  const auto w = chain(100, {200, 300});
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.packet.total_size, 600);
  EXPECT_EQ(r.packet.slots, 3U);
  EXPECT_EQ(r.packet.data_slots, 3U);
  ASSERT_EQ(r.packet.segment_count, 3U);
  EXPECT_EQ(r.packet.segments[0].size, 100);
  EXPECT_EQ(r.packet.segments[1].size, 200);
  EXPECT_EQ(r.packet.segments[2].size, 300);
  EXPECT_EQ(r.packet.segments[2].id, 2);
}

TEST(TxParser, ParsingStopsAtTheEndOfThePacket) {
  auto w = chain(100, {200});
  w.push_back(slot(9, 70));  // the next packet
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.packet.slots, 2U);
  const auto next = parse_tx_packet(std::span(w).subspan(r.packet.slots));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next.packet.total_size, 70);
}

TEST(TxParser, MoreDataSizesNotAddingUpIsDropped) {
  auto w = chain(100, {200});
  w[0].size = 150;  // following slot (200) > remaining (150): >= 64 KiB frame or corrupt
  w.push_back(slot(9, 70));
  const auto r = parse_tx_packet(w);
  EXPECT_TRUE(r.dropped());
  EXPECT_EQ(r.error, tx_error::slot_size_exceeds_remaining);
  EXPECT_EQ(r.packet.slots, 2U);  // both slots consumed (and answered with errors)
}

TEST(TxParser, RuntPacketIsDropped) {
  const std::vector<tx_request> w{slot(0, 13)};
  const auto r = parse_tx_packet(w);
  EXPECT_EQ(r.error, tx_error::runt);
  EXPECT_TRUE(r.dropped());
  EXPECT_EQ(r.packet.slots, 1U);
}

TEST(TxParser, EthernetHeaderSizedPacketIsAccepted) {
  const std::vector<tx_request> w{slot(0, 14)};
  EXPECT_TRUE(parse_tx_packet(w).ok());
}

TEST(TxParser, FollowingSlotCrossingPageIsFatal) {
  auto w = chain(100, {200});
  w[1].offset = 3900;  // 3900 + 200 > 4096
  const auto r = parse_tx_packet(w);
  EXPECT_TRUE(r.fatal());
  EXPECT_EQ(r.error, tx_error::slot_crosses_page);
}

TEST(TxParser, FirstSlotCrossingPageIsFatal) {
  const std::vector<tx_request> w{slot(0, 200, 0, 4000)};
  EXPECT_EQ(parse_tx_packet(w).error, tx_error::slot_crosses_page);
}

TEST(TxParser, SlotEndingExactlyAtPageEndIsAccepted) {
  const std::vector<tx_request> w{slot(0, 96, 0, 4000)};
  EXPECT_TRUE(parse_tx_packet(w).ok());
}

TEST(TxParser, FirstSlotOwnLengthDecidesItsPageCrossing) {
  auto w = chain(96, {3000});
  w[0].offset = 4000;  // total 3096 would cross, but slot 0 holds only 96 bytes
  EXPECT_TRUE(parse_tx_packet(w).ok());
}

// Linux netback's limits, which count the slots after the first: 18 of those
// (XEN_NETIF_NR_SLOTS_MIN) accepted, fatal_skb_slots (20) of them fatal once
// another follows. Old netfronts and GPLPV send 19-slot TSO packets.
TEST(TxParser, NineteenSlotsAccepted) {
  for (const std::uint32_t n : {18U, 19U}) {
    const auto w = slots_packet(n);
    const auto r = parse_tx_packet(w);
    ASSERT_TRUE(r.ok()) << n << ": " << to_string(r.error);
    EXPECT_EQ(r.packet.data_slots, n);
    EXPECT_EQ(r.packet.segment_count, n);
  }
}

TEST(TxParser, TwentyAndTwentyOneSlotsDropped) {
  for (const std::uint32_t n : {20U, 21U}) {
    const auto w = slots_packet(n);
    const auto r = parse_tx_packet(w);
    EXPECT_TRUE(r.dropped()) << n;
    EXPECT_EQ(r.error, tx_error::too_many_slots) << n;
    EXPECT_EQ(r.packet.slots, n);
  }
}

TEST(TxParser, TwentyTwoSlotsFatal) {
  const auto w = slots_packet(22);
  const auto r = parse_tx_packet(w);
  EXPECT_TRUE(r.fatal());
  EXPECT_EQ(r.error, tx_error::too_many_slots_fatal);
}

TEST(TxParser, SlotThresholdsAreParameters) {
  const tx_parser_limits lim{4, 6, true, true};
  EXPECT_TRUE(parse_tx_packet(slots_packet(4), lim).ok());
  EXPECT_EQ(parse_tx_packet(slots_packet(5), lim).error, tx_error::too_many_slots);
  EXPECT_EQ(parse_tx_packet(slots_packet(6), lim).error, tx_error::too_many_slots_fatal);
}

TEST(TxParser, ThresholdsAreClampedToTheArraySize) {
  const tx_parser_limits lim{1000, 1000, true, true};
  const auto w = slots_packet(tx_max_data_slots);
  EXPECT_EQ(parse_tx_packet(w, lim).error, tx_error::too_many_slots_fatal);
}

TEST(TxParser, EighteenOneByteSlotsFitThePerPacketArrays) {
  // XSA-432: the most slots, each shorter than any header.
  const auto w = chain(1, std::vector<std::uint16_t>(17, 1));
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  ASSERT_EQ(r.packet.segment_count, 18U);
  std::uint32_t sum = 0;
  for (std::uint32_t i = 0; i < r.packet.segment_count; ++i) {
    sum += r.packet.segments[i].size;
  }
  EXPECT_EQ(sum, 18U);
}

TEST(TxParser, MoreDataOnLastPublishedSlotIsFatal) {
  auto w = chain(100, {200});
  w[1].flags = tx_flags::more_data;  // asks for a slot that was never published
  EXPECT_EQ(parse_tx_packet(w).error, tx_error::missing_slots);
}

TEST(TxParser, MissingExtraIsFatal) {
  const std::vector<tx_request> w{slot(0, 60, tx_flags::extra_info)};
  EXPECT_EQ(parse_tx_packet(w).error, tx_error::missing_extra);
}

TEST(TxParser, ExtraChainRunningPastPublishedRequestsIsFatal) {
  const std::vector<tx_request> w{slot(0, 60, tx_flags::extra_info),
                                  extra_slot(extra_type::hash, true)};
  EXPECT_EQ(parse_tx_packet(w).error, tx_error::missing_extra);
}

TEST(TxParser, UnknownExtraTypeIsFatal) {
  for (std::uint8_t type : {std::uint8_t{0}, std::uint8_t{5}, std::uint8_t{0xFF}}) {
    const std::vector<tx_request> w{slot(0, 60, tx_flags::extra_info), extra_slot(type)};
    const auto r = parse_tx_packet(w);
    EXPECT_TRUE(r.fatal()) << int{type};
    EXPECT_EQ(r.error, tx_error::bad_extra_type) << int{type};
  }
}

TEST(TxParser, DuplicateExtraTypeIsDropped) {
  std::vector<tx_request> w{slot(0, 60, tx_flags::extra_info | tx_flags::more_data),
                            extra_slot(extra_type::hash, true), extra_slot(extra_type::hash),
                            slot(1, 10)};
  const auto r = parse_tx_packet(w);
  EXPECT_EQ(r.error, tx_error::duplicate_extra);
  EXPECT_EQ(r.packet.slots, 4U);  // extras and the data chain are all consumed
  EXPECT_EQ(r.packet.extra_count, 2U);
}

TEST(TxParser, ExtrasAreCountedInConsumedSlots) {
  std::vector<tx_request> w{slot(0, 1000, tx_flags::extra_info | tx_flags::more_data),
                            gso_slot(gso_type::tcpv4, 1448, true), extra_slot(extra_type::hash),
                            slot(1, 400)};
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok()) << to_string(r.error);
  EXPECT_EQ(r.packet.slots, 4U);
  EXPECT_EQ(r.packet.extra_count, 2U);
  EXPECT_EQ(r.packet.data_slots, 2U);
  EXPECT_TRUE(r.packet.has_gso);
  EXPECT_EQ(r.packet.gso_type, gso_type::tcpv4);
  EXPECT_EQ(r.packet.gso_size, 1448);
  EXPECT_TRUE(r.packet.has_hash);
  ASSERT_EQ(r.packet.segment_count, 2U);
  EXPECT_EQ(r.packet.segments[0].size, 600);
  EXPECT_EQ(r.packet.segments[1].size, 400);
}

TEST(TxParser, GsoSizeZeroIsFatal) {
  const std::vector<tx_request> w{slot(0, 60, tx_flags::extra_info), gso_slot(gso_type::tcpv4, 0)};
  EXPECT_EQ(parse_tx_packet(w).error, tx_error::bad_gso);
}

TEST(TxParser, GsoTypeOtherThanTcpIsFatal) {
  for (std::uint8_t t : {gso_type::none, std::uint8_t{3}, std::uint8_t{0xFF}}) {
    const std::vector<tx_request> w{slot(0, 60, tx_flags::extra_info), gso_slot(t, 1400)};
    EXPECT_EQ(parse_tx_packet(w).error, tx_error::bad_gso) << int{t};
  }
}

TEST(TxParser, GsoTypeNotAdvertisedIsDropped) {
  const std::vector<tx_request> w{slot(0, 60, tx_flags::extra_info),
                                  gso_slot(gso_type::tcpv6, 1400)};
  const tx_parser_limits lim{18, 20, true, false};
  const auto r = parse_tx_packet(w, lim);
  EXPECT_EQ(r.error, tx_error::gso_not_negotiated);
  EXPECT_EQ(r.packet.slots, 2U);
}

TEST(TxParser, ZeroLengthFollowingSlotIsOkay) {
  const auto w = chain(100, {0, 50});
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.packet.slots, 3U);
  EXPECT_EQ(r.packet.data_slots, 3U);
  ASSERT_EQ(r.packet.segment_count, 2U);  // no grant op for the empty slot (XSA-448)
  EXPECT_EQ(r.packet.segments[1].size, 50);
  EXPECT_EQ(r.packet.segments[1].id, 2);
}

TEST(TxParser, AllZeroLengthFollowingSlotsGiveNoEmptySegments) {
  const auto w = chain(60, {0, 0, 0});
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.packet.segment_count, 1U);
  EXPECT_EQ(r.packet.segments[0].size, 60);
}

TEST(TxParser, ZeroLengthFirstSlotGetsNoSegment) {
  const auto w = chain(0, {60, 40});
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.packet.segment_count, 2U);
  EXPECT_EQ(r.packet.segments[0].size, 60);
  EXPECT_EQ(r.packet.segments[0].id, 1);
}

TEST(TxParser, McastAddMakesDummyPacket) {
  const std::vector<tx_request> w{slot(0, 0, tx_flags::extra_info),
                                  mcast_slot(extra_type::mcast_add, {0x01, 0, 0x5e, 0, 0, 1})};
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok()) << to_string(r.error);  // no runt check for a dummy
  EXPECT_EQ(r.packet.mcast, tx_mcast_op::add);
  EXPECT_EQ(r.packet.mcast_addr[2], 0x5e);
  EXPECT_EQ(r.packet.slots, 2U);
  EXPECT_EQ(r.packet.segment_count, 0U);
}

TEST(TxParser, McastDelMakesDummyPacket) {
  const std::vector<tx_request> w{slot(0, 0, tx_flags::extra_info),
                                  mcast_slot(extra_type::mcast_del, {0x01, 0, 0x5e, 0, 0, 2})};
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.packet.mcast, tx_mcast_op::del);
  EXPECT_EQ(r.packet.mcast_addr[5], 2);
}

TEST(TxParser, HashExtraValueIsLittleEndian) {
  extra_info e{};
  e.type = extra_type::hash;
  e.u.hash.type = 1;
  e.u.hash.algorithm = 1;
  e.u.hash.value[0] = 0x78;
  e.u.hash.value[3] = 0x12;
  tx_request x{};
  std::memcpy(&x, &e, sizeof(e));
  const std::vector<tx_request> w{slot(0, 60, tx_flags::extra_info), x};
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.packet.hash_value, 0x12000078U);
  EXPECT_EQ(r.packet.hash_type, 1);
}

TEST(TxParser, DroppedPacketStillWalksToItsEnd) {
  auto w = slots_packet(20);  // dropped for too many slots
  w.push_back(slot(50, 60));
  const auto r = parse_tx_packet(w);
  ASSERT_TRUE(r.dropped());
  const auto next = parse_tx_packet(std::span(w).subspan(r.packet.slots));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next.packet.segments[0].id, 50);
}

TEST(TxParser, PageCrossingInsideDroppedPacketIsStillFatal) {
  auto w = slots_packet(20);
  w[19].offset = 4095;  // the 20th slot crosses a page
  EXPECT_EQ(parse_tx_packet(w).error, tx_error::slot_crosses_page);
}

}  // namespace
}  // namespace unetback::rings
