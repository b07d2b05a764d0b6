// The guest-RX response builder: slot counts, copy plans, response contents.

#include "unetback/rings/rx_builder.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <vector>

namespace unetback::rings {
namespace {

offload_features sg_gso() {
  return offload_features{true, true, true, true, false};
}

std::vector<rx_request> posted(std::size_t n) {
  std::vector<rx_request> reqs(n);
  for (std::size_t i = 0; i < n; ++i) {
    reqs[i].id = static_cast<std::uint16_t>(200 + i);
    reqs[i].gref = static_cast<std::uint32_t>(5000 + i);
  }
  return reqs;
}

rx_packet_desc packet(std::uint32_t len) {
  rx_packet_desc p;
  p.length = len;
  return p;
}

/// A GSO frame as the TAP hands it over: partial checksum, `type`, `size`.
rx_packet_desc gso_packet(std::uint32_t len, std::uint8_t type, std::uint16_t size) {
  rx_packet_desc p = packet(len);
  p.offload.csum_partial = true;
  p.offload.gso_type = type;
  p.offload.gso_size = size;
  return p;
}

/// build_rx into a fresh plan, returned with it.
result<rx_plan, rx_error> built(const rx_packet_desc& p, const offload_features& f,
                                std::span<const rx_request> reqs) {
  rx_plan plan;
  const auto slots = build_rx(p, f, reqs, plan);
  if (!slots) {
    return slots.error();
  }
  EXPECT_EQ(slots.value(), plan.slots);
  return plan;
}

extra_info as_extra(const rx_response& r) {
  extra_info e;
  std::memcpy(&e, &r, sizeof(e));
  return e;
}

TEST(RxBuilder, SmallFrameUsesOneSlot) {
  const auto reqs = posted(4);
  const auto plan = built(packet(60), sg_gso(), reqs);
  ASSERT_TRUE(plan);
  const rx_plan& p = plan.value();
  EXPECT_EQ(p.slots, 1U);
  ASSERT_EQ(p.copy_count, 1U);
  EXPECT_EQ(p.copies[0].gref, grant_ref(5000));
  EXPECT_EQ(p.copies[0].src_offset, 0U);
  EXPECT_EQ(p.copies[0].len, 60);
  EXPECT_EQ(p.responses[0].id, 200);
  EXPECT_EQ(p.responses[0].status, 60);
  EXPECT_EQ(p.responses[0].offset, 0);
  EXPECT_EQ(p.responses[0].flags, 0);
}

TEST(RxBuilder, PartialChecksumSetsBlankAndValidated) {
  auto desc = packet(60);
  desc.offload.csum_partial = true;
  desc.offload.csum_validated = true;
  const auto plan = built(desc, sg_gso(), posted(1));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan.value().responses[0].flags, rx_flags::csum_blank | rx_flags::data_validated);
  EXPECT_EQ(plan.value().responses[0].flags, 0x3);  // RX bit order: validated=1, blank=2
}

TEST(RxBuilder, ValidatedChecksumSetsOnlyDataValidated) {
  auto desc = packet(60);
  desc.offload.csum_validated = true;
  const auto plan = built(desc, sg_gso(), posted(1));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan.value().responses[0].flags, rx_flags::data_validated);
}

TEST(RxBuilder, LargeFrameSpansPagesWithMoreData) {
  const auto plan = built(packet(10000), sg_gso(), posted(3));
  ASSERT_TRUE(plan);
  const rx_plan& p = plan.value();
  ASSERT_EQ(p.slots, 3U);
  EXPECT_EQ(p.responses[0].status, 4096);
  EXPECT_EQ(p.responses[1].status, 4096);
  EXPECT_EQ(p.responses[2].status, 10000 - 8192);
  EXPECT_EQ(p.responses[0].flags, rx_flags::more_data);
  EXPECT_EQ(p.responses[1].flags, rx_flags::more_data);
  EXPECT_EQ(p.responses[2].flags, 0);
  EXPECT_EQ(p.copies[2].src_offset, 8192U);
  EXPECT_EQ(p.copies[2].gref, grant_ref(5002));
  EXPECT_EQ(p.responses[2].id, 202);
}

TEST(RxBuilder, GsoExtraFollowsFirstSlot) {
  const auto desc = gso_packet(5000, gso_type::tcpv4, 1448);
  ASSERT_EQ(rx_slots_needed(desc, sg_gso()).value(), 3U);
  const auto plan = built(desc, sg_gso(), posted(3));
  ASSERT_TRUE(plan);
  const rx_plan& p = plan.value();
  EXPECT_EQ(p.responses[0].flags & rx_flags::extra_info, rx_flags::extra_info);
  EXPECT_EQ(p.responses[0].flags & rx_flags::more_data, rx_flags::more_data);
  const extra_info e = as_extra(p.responses[1]);
  EXPECT_EQ(e.type, extra_type::gso);
  EXPECT_EQ(e.flags, 0);
  EXPECT_EQ(e.u.gso.size, 1448);
  EXPECT_EQ(e.u.gso.type, gso_type::tcpv4);
  EXPECT_EQ(e.u.gso.pad, 0);
  EXPECT_EQ(e.u.gso.features, 0);
  EXPECT_EQ(p.responses[2].status, 5000 - 4096);  // data continues after the extra
  EXPECT_EQ(p.responses[2].id, 202);
  ASSERT_EQ(p.copy_count, 2U);
  EXPECT_EQ(p.copies[1].slot, 2U);
  EXPECT_EQ(p.copies[1].gref, grant_ref(5002));
}

TEST(RxBuilder, GsoAndHashExtrasAreChained) {
  auto desc = gso_packet(100, gso_type::tcpv6, 1400);
  desc.hash = rx_hash{true, _XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP, 0xA1B2C3D4};
  const auto plan = built(desc, sg_gso(), posted(3));
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan.value().slots, 3U);
  const extra_info g = as_extra(plan.value().responses[1]);
  const extra_info h = as_extra(plan.value().responses[2]);
  EXPECT_EQ(g.type, extra_type::gso);
  EXPECT_EQ(g.flags, extra_flag_more);
  EXPECT_EQ(h.type, extra_type::hash);
  EXPECT_EQ(h.flags, 0);
  EXPECT_EQ(h.u.hash.type, _XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP);
  EXPECT_EQ(h.u.hash.algorithm, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ);
  EXPECT_EQ(h.u.hash.value[0], 0xD4);
  EXPECT_EQ(h.u.hash.value[3], 0xA1);
}

TEST(RxBuilder, FrameLargerThanPageWithoutSgIsDropped) {
  offload_features no_sg{};
  EXPECT_EQ(rx_slots_needed(packet(4096), no_sg).value(), 1U);
  EXPECT_EQ(rx_slots_needed(packet(4097), no_sg).error(), rx_error::too_big_without_sg);
}

TEST(RxBuilder, FrameNeedingMoreThanEighteenPagesIsDropped) {
  EXPECT_EQ(rx_slots_needed(packet(18 * 4096), sg_gso()).value(), 18U);
  EXPECT_EQ(rx_slots_needed(packet(18 * 4096 + 1), sg_gso()).error(), rx_error::too_big);
}

TEST(RxBuilder, EmptyFrameIsDropped) {
  EXPECT_EQ(rx_slots_needed(packet(0), sg_gso()).error(), rx_error::empty);
}

TEST(RxBuilder, GsoTypeFrontendDidNotRequestIsDropped) {
  auto desc = packet(3000);
  desc.offload.gso_type = gso_type::tcpv6;
  desc.offload.gso_size = 1400;
  auto feats = sg_gso();
  feats.gso_tcpv6 = false;
  EXPECT_EQ(rx_slots_needed(desc, feats).error(), rx_error::gso_not_negotiated);
  EXPECT_EQ(built(desc, feats, posted(3)).error(), rx_error::gso_not_negotiated);
}

TEST(RxBuilder, FailedCopyMarksOnlyItsSlotAsError) {
  auto plan = built(packet(9000), sg_gso(), posted(3)).value();
  plan.fail_copy(1);
  EXPECT_EQ(plan.responses[0].status, 4096);
  EXPECT_EQ(plan.responses[1].status, netif_rsp::error);
  EXPECT_EQ(plan.responses[2].status, 9000 - 8192);
}

TEST(RxBuilder, ResponsesCarryNoStaleBytes) {
  auto desc = packet(60);
  desc.hash = rx_hash{true, 0, 1};
  const auto plan = built(desc, sg_gso(), posted(2)).value();
  const extra_info h = as_extra(plan.responses[1]);
  EXPECT_EQ(h.u.hash.value[1], 0);
  EXPECT_EQ(plan.responses[0].offset, 0);
  for (std::uint32_t i = plan.slots; i < rx_max_slots; ++i) {
    EXPECT_EQ(plan.responses[i].status, 0);
  }
}

TEST(RxBuilder, ReusedPlanIsRebuiltForTheNextPacket) {
  auto big = gso_packet(9000, gso_type::tcpv4, 1448);
  big.hash = rx_hash{true, _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP, 7};
  rx_plan plan;
  ASSERT_EQ(build_rx(big, sg_gso(), posted(5), plan).value(), 5U);
  ASSERT_EQ(plan.copy_count, 3U);

  auto reqs = posted(1);
  reqs[0].id = 9;
  reqs[0].gref = 77;
  ASSERT_EQ(build_rx(packet(60), sg_gso(), reqs, plan).value(), 1U);
  EXPECT_EQ(plan.slots, 1U);
  ASSERT_EQ(plan.copy_count, 1U);
  EXPECT_EQ(plan.copies[0].slot, 0U);
  EXPECT_EQ(plan.copies[0].gref, grant_ref(77));
  EXPECT_EQ(plan.copies[0].src_offset, 0U);
  EXPECT_EQ(plan.copies[0].len, 60);
  EXPECT_EQ(plan.responses[0].id, 9);
  EXPECT_EQ(plan.responses[0].flags, 0);  // no extra_info or more_data left from the GSO frame
  EXPECT_EQ(plan.responses[0].status, 60);
}

TEST(RxBuilder, RefusedPacketLeavesItsSlotCountOut) {
  rx_plan plan;
  EXPECT_EQ(build_rx(packet(0), sg_gso(), posted(1), plan).error(), rx_error::empty);
  EXPECT_EQ(plan.slots, 0U);
  EXPECT_EQ(plan.copy_count, 0U);
}

}  // namespace
}  // namespace unetback::rings
