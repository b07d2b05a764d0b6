// Guest TX through a running queue: what reaches the TAP, what the guest is
// answered, and which counters move.

#include <cstring>

#include "queue_fixture.hpp"

namespace unetback::datapath::test {
namespace {

using namespace rings::test;  // NOLINT(google-build-using-namespace): frame builders
using rings::tx_flags::csum_blank;
using rings::tx_flags::data_validated;
using rings::tx_flags::extra_info;
using rings::tx_flags::more_data;

rings::tx_request as_slot(const rings::extra_info& e) {
  rings::tx_request r{};
  std::memcpy(&r, &e, sizeof(e));
  return r;
}

class GuestTx : public QueueTest {};

TEST_F(GuestTx, SingleSlotPacketReachesTapWithVnetHeader) {
  start_queue();
  const frame f = ipv4_frame(rings::ipproto_tcp, ip_a, ip_b, tcp_segment(1000, 80, 0x18, 100));
  send_slots({one_slot(f, csum_blank | data_validated, 42)});

  rings::vnet_header h{};
  frame got;
  ASSERT_TRUE(tap_read(h, got));
  EXPECT_EQ(h.flags, rings::vnet_f_needs_csum);
  EXPECT_EQ(h.csum_start, 34);
  EXPECT_EQ(h.csum_offset, 16);
  EXPECT_EQ(h.gso_type, rings::vnet_gso_none);
  ASSERT_EQ(got.size(), f.size());
  EXPECT_TRUE(std::equal(got.begin(), got.begin() + 50, f.begin()));  // up to the checksum
  ASSERT_TRUE(wait_tx_responses(1));
  EXPECT_EQ(tx_rsps_[0].id, 42);
  EXPECT_EQ(tx_rsps_[0].status, rings::netif_rsp::okay);
  const auto c = counters();
  EXPECT_EQ(c.tx_packets, 1U);
  EXPECT_EQ(c.tx_bytes, f.size());
  EXPECT_EQ(c.tx_requests, 1U);
  EXPECT_EQ(c.grant_copy_calls, 1U);
  EXPECT_EQ(c.grant_copy_segments, 1U);
  EXPECT_EQ(c.tx_errors, 0U);
  // rsp_event was 1: the guest asked. The kick follows the responses: wait for it.
  EXPECT_TRUE(wait_until([&] { return evtchn().notifies_to(tx_port) >= 1; }));
}

// The guest moved rsp_event far ahead (it polls its ring instead of asking
// for a kick, ring.h RING_FINAL_CHECK_FOR_RESPONSES not called). Returns the
// kicks the backend sent for one answered packet.
class GuestTxNotification : public GuestTx {
 protected:
  int kicks_for_one_packet() {
    header(tx_ref_).rsp_event = 1000;
    start_queue();
    const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 64));
    send_slots({one_slot(f, 0, 1)});
    EXPECT_TRUE(wait_tx_responses(1));
    rings::vnet_header h{};
    frame got;
    EXPECT_TRUE(tap_read(h, got));
    queue_->stop();  // joins the worker: its sweep, kicks included, is over
    EXPECT_EQ(counters().notify_sent, static_cast<std::uint64_t>(evtchn().notifies_to(tx_port)));
    return evtchn().notifies_to(tx_port);
  }
};

TEST_F(GuestTxNotification, GuestThatDidNotAskIsNotKicked) {
  EXPECT_EQ(kicks_for_one_packet(), 0);
}

TEST_F(GuestTxNotification, NotifyAlwaysKicksEvenAGuestThatDidNotAsk) {
  config_.tuning.notify_always = true;
  EXPECT_EQ(kicks_for_one_packet(), 1);
}

TEST_F(GuestTx, ThreeSlotGsoPacketReachesTapAsOneFrame) {
  start_queue();
  const frame f = ipv4_frame(rings::ipproto_tcp, ip_a, ip_b, tcp_segment(1, 2, 0x10, 5000));
  const auto part = [&](std::size_t off, std::size_t len) {
    return std::span<const std::byte>(f).subspan(off, len);
  };
  rings::tx_request first{};
  first.gref = put_data(part(0, 1000), 96);
  first.offset = 96;
  first.size = static_cast<std::uint16_t>(f.size());
  first.flags = csum_blank | data_validated | more_data | extra_info;
  first.id = 10;
  rings::extra_info gso{};
  gso.type = rings::extra_type::gso;
  gso.u.gso.type = rings::gso_type::tcpv4;
  gso.u.gso.size = 1448;
  rings::tx_request second{};
  second.gref = put_data(part(1000, 4000));
  second.size = 4000;
  second.flags = more_data;
  second.id = 11;
  rings::tx_request third{};
  third.gref = put_data(part(5000, f.size() - 5000));
  third.size = static_cast<std::uint16_t>(f.size() - 5000);
  third.id = 12;
  send_slots({first, as_slot(gso), second, third});

  rings::vnet_header h{};
  frame got;
  ASSERT_TRUE(tap_read(h, got));
  EXPECT_EQ(got.size(), f.size());
  EXPECT_EQ(h.gso_type, rings::vnet_gso_tcpv4);
  EXPECT_EQ(h.gso_size, 1448);
  EXPECT_EQ(h.hdr_len, 54);
  EXPECT_TRUE(std::equal(got.begin() + 60, got.end(), f.begin() + 60));  // payload intact
  ASSERT_TRUE(wait_tx_responses(4));
  EXPECT_EQ(tx_rsps_[0].id, 10);
  EXPECT_EQ(tx_rsps_[0].status, rings::netif_rsp::okay);
  EXPECT_EQ(tx_rsps_[1].status, rings::netif_rsp::null);  // the extra-info slot
  EXPECT_EQ(tx_rsps_[2].id, 11);
  EXPECT_EQ(tx_rsps_[3].id, 12);
  EXPECT_EQ(tx_rsps_[3].status, rings::netif_rsp::okay);
  EXPECT_EQ(counters().grant_copy_segments, 3U);
  EXPECT_EQ(counters().tx_requests, 4U);
}

TEST_F(GuestTx, InvalidGrantRefGetsErrorAndQueueKeepsWorking) {
  start_queue();
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 40));
  rings::tx_request bad = one_slot(f, 0, 1);
  bad.gref = 999999;  // never granted
  send_slots({bad});
  ASSERT_TRUE(wait_tx_responses(1));
  EXPECT_EQ(tx_rsps_[0].status, rings::netif_rsp::error);
  EXPECT_EQ(counters().tx_drops_grant_copy, 1U);
  EXPECT_EQ(counters().grant_copy_errors, 1U);
  EXPECT_EQ(counters().tx_errors, 1U);

  send_slots({one_slot(f, 0, 2)});
  expect_sent_and_answered(f, 2);
  EXPECT_TRUE(faults().empty());
}

TEST_F(GuestTx, RevokedGrantInMultiSlotPacketFailsOnlyThatPacket) {
  start_queue();
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 200));
  rings::tx_request a = one_slot(std::span<const std::byte>(f).first(100), more_data, 1);
  a.size = static_cast<std::uint16_t>(f.size());
  rings::tx_request b = one_slot(std::span<const std::byte>(f).subspan(100), 0, 2);
  mem_.revoke(b.gref);
  send_slots({a, b, one_slot(f, 0, 3)});
  ASSERT_TRUE(wait_tx_responses(3));
  EXPECT_EQ(tx_rsps_[0].status, rings::netif_rsp::error);
  EXPECT_EQ(tx_rsps_[1].status, rings::netif_rsp::error);
  EXPECT_EQ(tx_rsps_[2].status, rings::netif_rsp::okay);
  EXPECT_EQ(counters().tx_packets, 1U);
  EXPECT_EQ(counters().grant_copy_calls, 1U);  // one batched call for the whole sweep
}

TEST_F(GuestTx, RuntPacketIsAnsweredWithError) {
  start_queue();
  const frame tiny(10, std::byte{1});
  send_slots({one_slot(tiny, 0, 7)});
  ASSERT_TRUE(wait_tx_responses(1));
  EXPECT_EQ(tx_rsps_[0].status, rings::netif_rsp::error);
  EXPECT_EQ(counters().tx_drops_runt, 1U);
  EXPECT_EQ(counters().tx_errors, 1U);
  EXPECT_EQ(counters().grant_copy_calls, 0U);  // nothing copied for a dropped packet
}

TEST_F(GuestTx, CsumBlankOnGarbageIsAnsweredWithError) {
  start_queue();
  frame junk(60, std::byte{0xEE});
  send_slots({one_slot(junk, csum_blank, 7)});
  ASSERT_TRUE(wait_tx_responses(1));
  EXPECT_EQ(tx_rsps_[0].status, rings::netif_rsp::error);
  EXPECT_EQ(counters().tx_drops_bad_headers, 1U);
  rings::vnet_header h{};
  frame got;
  EXPECT_FALSE(tap_read(h, got, 50));  // the kernel never sees it
}

TEST_F(GuestTx, ZeroLengthSlotsAreAnsweredWithoutGrantOps) {
  start_queue();
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 40));
  rings::tx_request a = one_slot(f, more_data, 1);
  rings::tx_request z1{};
  z1.gref = 999999;  // never used: empty slots get no grant op (XSA-448)
  z1.flags = more_data;
  z1.id = 2;
  rings::tx_request z2{};
  z2.gref = 999999;
  z2.id = 3;
  send_slots({a, z1, z2});
  ASSERT_TRUE(wait_tx_responses(3));
  for (const auto& r : tx_rsps_) {
    EXPECT_EQ(r.status, rings::netif_rsp::okay);
  }
  EXPECT_EQ(counters().grant_copy_segments, 1U);
  EXPECT_EQ(counters().tx_packets, 1U);
}

TEST_F(GuestTx, TwentySlotPacketIsDroppedAndAllSlotsAnswered) {
  start_queue();
  std::vector<rings::tx_request> slots;
  const frame chunk(10, std::byte{3});
  for (std::uint16_t i = 0; i < 20; ++i) {
    rings::tx_request r = one_slot(chunk, i + 1 < 20 ? more_data : 0, i);
    slots.push_back(r);
  }
  slots[0].size = 200;
  send_slots(slots);
  ASSERT_TRUE(wait_tx_responses(20));
  for (const auto& r : tx_rsps_) {
    EXPECT_EQ(r.status, rings::netif_rsp::error);
  }
  EXPECT_EQ(counters().tx_drops_too_many_slots, 1U);
  EXPECT_TRUE(faults().empty());
}

TEST_F(GuestTx, GsoWithoutCsumBlankIsRepairedAndCounted) {
  start_queue();
  const frame f = ipv6_frame(rings::ipproto_tcp, ip6_a, ip6_b, tcp_segment(1, 2, 0x10, 3000));
  rings::tx_request first = one_slot(f, extra_info, 1);
  rings::extra_info gso{};
  gso.type = rings::extra_type::gso;
  gso.u.gso.type = rings::gso_type::tcpv6;
  gso.u.gso.size = 1400;
  send_slots({first, as_slot(gso)});
  rings::vnet_header h{};
  frame got;
  ASSERT_TRUE(tap_read(h, got));
  EXPECT_EQ(h.flags, rings::vnet_f_needs_csum);
  EXPECT_EQ(h.gso_type, rings::vnet_gso_tcpv6);
  EXPECT_TRUE(wait_until([&] { return counters().tx_gso_checksum_fixups == 1; }));
}

TEST_F(GuestTx, RateLimitHoldsPacketsUntilCreditArrives) {
  config_.tuning.rate_bytes = 150 * 1024;  // per 300 ms; burst max(150K, 128K)
  config_.tuning.rate_interval = std::chrono::milliseconds(300);
  start_queue();
  const frame big = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 60000));
  const auto t0 = std::chrono::steady_clock::now();
  // Credit starts at the 150K burst: two 60K packets pass, the third waits for
  // the 30K it lacks: 60 ms at 150K per 300 ms, from when the queue started
  // (a little before t0).
  for (std::uint16_t i = 0; i < 3; ++i) {
    std::vector<rings::tx_request> slots;
    for (std::size_t off = 0, k = 0; off < big.size(); off += 4096, ++k) {
      const std::size_t len = std::min<std::size_t>(4096, big.size() - off);
      rings::tx_request r =
          one_slot(std::span<const std::byte>(big).subspan(off, len),
                   off + len < big.size() ? more_data : 0, static_cast<std::uint16_t>(i * 100 + k));
      slots.push_back(r);
    }
    slots[0].size = static_cast<std::uint16_t>(big.size());
    send_slots(slots);
  }
  ASSERT_TRUE(wait_until([&] {
    rings::vnet_header h{};
    frame got;
    while (tap_read(h, got, 0)) {
    }
    return counters().tx_packets == 3;
  }));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(30));
  EXPECT_GE(counters().tx_throttled, 1U);
}

TEST_F(GuestTx, McastAddIsAppliedAndAnsweredWithoutFrame) {
  start_queue();
  rings::tx_request first{};
  first.flags = extra_info;
  first.id = 4;
  rings::extra_info add{};
  add.type = rings::extra_type::mcast_add;
  const std::uint8_t mac[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  std::memcpy(add.u.mcast.addr, mac, 6);
  send_slots({first, as_slot(add)});
  ASSERT_TRUE(wait_tx_responses(2));
  EXPECT_EQ(tx_rsps_[0].status, rings::netif_rsp::okay);
  EXPECT_EQ(tx_rsps_[1].status, rings::netif_rsp::null);
  EXPECT_TRUE(shared_->multicast_match({0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}));
  EXPECT_EQ(counters().tx_mcast_add, 1U);
  rings::vnet_header h{};
  frame got;
  EXPECT_FALSE(tap_read(h, got, 50));
}

TEST_F(GuestTx, BoundedBatchStillDrainsALongQueue) {
  config_.tuning.tx_batch = 4;
  start_queue();
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 20));
  std::vector<rings::tx_request> slots;
  for (std::uint16_t i = 0; i < 50; ++i) {
    slots.push_back(one_slot(f, 0, i));
  }
  send_slots(slots);
  ASSERT_TRUE(wait_tx_responses(50));
  for (std::uint16_t i = 0; i < 50; ++i) {
    EXPECT_EQ(tx_rsps_[i].id, i);
  }
  EXPECT_GE(counters().grant_copy_calls, 13U);  // at most 4 requests per sweep
}

}  // namespace
}  // namespace unetback::datapath::test
