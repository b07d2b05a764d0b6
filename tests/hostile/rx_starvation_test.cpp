// Guest RX starvation (XSA-392; docs/protocol.md §3.4-3.5, §6.2 items 22-23):
// the host floods a guest that posts no RX buffers, or stops consuming them,
// or leaves fewer slots than its head packet needs. The daemon's memory must
// stay bounded (the backlog is the TAP's bounded kernel queue: the daemon
// reads the TAP only while slots are posted), and delivery must resume once
// the guest posts buffers. A guest that takes nothing for rx_stall_timeout
// has the vif's carrier off (the host stops queueing for it) until it posts
// buffers again, and what waited is dropped, not delivered stale.

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

/// Frames the flood sends: 100000 x 1400 bytes = 140 MB, far above the bound.
constexpr int flood_frames = 100000;
constexpr std::size_t flood_frame_bytes = 1400;

class RxStarvation : public hostile_test {
 protected:
  /// Floods vif2.0 towards the hostile guest; frames the kernel accepted.
  int flood(raw_port& port, int frames, std::size_t bytes) {
    const mac_bytes to = parse_mac(hostile_guest::mac);
    const mac_bytes from = parse_mac("02:00:00:00:00:01");
    const auto frame = test_frame(to, from, bytes, 0x5A);
    int sent = 0;
    for (int i = 0; i < frames; ++i) {
      sent += port.send(frame) ? 1 : 0;
    }
    return sent;
  }
  /// Connects `m` (one queue, no RX buffer posted) and raises the hostile
  /// vif's MTU to 9000, so that one frame needs three RX slots.
  void connect_for_jumbo_frames(manual_frontend& m) {
    m.connect();
    ASSERT_TRUE(guest().wait_backend_state({4}));
    ASSERT_EQ(w().ip_host({"link", "set", "dev", hostile_guest::vif, "mtu", "9000"}), 0);
  }
  /// Kernel drops on the host side of vif2.0 (its TX: towards the daemon).
  std::uint64_t host_tx_dropped() {
    nlohmann::json s;
    // `ip -s -j link` can time out on a loaded machine: retry, then fail loudly.
    const bool read = wait_until(
        [&] {
          s = w().host_link_stats(hostile_guest::vif);
          return s.is_object() && s.contains("stats64");
        },
        std::chrono::seconds(10), std::chrono::milliseconds(200));
    EXPECT_TRUE(read) << "could not read vif2.0's link statistics";
    return read ? s["stats64"]["tx"].value("dropped", std::uint64_t{0}) : 0;
  }
};

TEST_F(RxStarvation, GuestThatNeverPostsRxBuffersKeepsMemoryBounded) {
  isolate_hostile_vif();
  manual_frontend m(guest(), 1, false, false);  // rings granted, no RX buffer ever posted
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  raw_port inject(w().host_ns(), hostile_guest::vif);
  begin_attack();
  const int sent = flood(inject, flood_frames, flood_frame_bytes);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(counter("rx_packets"), 0U);
  EXPECT_EQ(counter("rx_slots"), 0U);
  const auto dropped = host_tx_dropped();
  EXPECT_GT(dropped + static_cast<std::uint64_t>(flood_frames - sent), 0U)
      << "nothing was dropped: who holds " << flood_frames << " frames?";
  std::cerr << "[flood] " << sent << " frames sent, host-side drops " << dropped << "\n";
  // The guest finally posts buffers: the daemon delivers again.
  rx_driver rx(guest(), m.queue(0));
  for (int i = 0; i < 8; ++i) {
    rx.post_buffer();
  }
  const auto rsp = rx.responses(8);
  EXPECT_EQ(rsp.size(), 8U);
  for (const auto& r : rsp) {
    EXPECT_EQ(r.status, static_cast<std::int16_t>(flood_frame_bytes));
  }
  expect_contained();
}

TEST_F(RxStarvation, GuestThatStopsConsumingRxResponsesKeepsMemoryBounded) {
  isolate_hostile_vif();
  guest().connect();                                // 256 RX buffers posted at connect
  rx_driver rx(guest(), guest().stopped_queue(0));  // nobody consumes or re-posts now
  raw_port inject(w().host_ns(), hostile_guest::vif);
  begin_attack();
  flood(inject, flood_frames, flood_frame_bytes);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_LE(counter("rx_slots"), rings::rx_front_ring::size);
  EXPECT_LE(counter("rx_packets"), rings::rx_front_ring::size);
  EXPECT_EQ(rx.unconsumed(), counter("rx_slots"));
  expect_contained();
}

// XSA-392 (second half): one free slot while the head packet needs three.
// The daemon waits for the slots (it neither spins nor delivers a truncated
// packet nor overtakes it) and delivers it whole once they are posted.
TEST_F(RxStarvation, HeadPacketNeedingMoreSlotsThanPostedWaitsForThem) {
  isolate_hostile_vif();
  manual_frontend m(guest(), 1, false, false);
  connect_for_jumbo_frames(m);
  rx_driver rx(guest(), m.queue(0));
  raw_port inject(w().host_ns(), hostile_guest::vif);
  const mac_bytes to = parse_mac(hostile_guest::mac);
  const mac_bytes from = parse_mac("02:00:00:00:00:01");
  begin_attack();
  rx.post_buffer();
  ASSERT_TRUE(inject.send(test_frame(to, from, 9000, 1)));  // needs 3 slots (feature-sg)
  ASSERT_TRUE(inject.send(test_frame(to, from, 100, 2)));   // would fit in one
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(rx.unconsumed(), 0U) << "the daemon delivered around or part of the head packet";
  rx.post_buffer();
  rx.post_buffer();
  rx.post_buffer();
  const auto rsp = rx.responses(4);
  ASSERT_EQ(rsp.size(), 4U);
  int first_packet = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_GT(rsp[static_cast<std::size_t>(i)].status, 0);
    first_packet += rsp[static_cast<std::size_t>(i)].status;
  }
  EXPECT_EQ(first_packet, 9000);
  EXPECT_NE(rsp[0].flags & rings::rx_flags::more_data, 0);
  EXPECT_EQ(rsp[2].flags & rings::rx_flags::more_data, 0);
  EXPECT_EQ(rsp[3].status, 100);
  expect_contained();
}

// XSA-216 / XSA-403 class: the backend writes exactly the frame into the
// guest's buffers - not one byte of its own memory beyond the frame's end,
// in the last slot of a multi-slot packet either.
TEST_F(RxStarvation, FramesAreCopiedExactlyIntoGuestBuffers) {
  isolate_hostile_vif();
  manual_frontend m(guest(), 1, false, false);
  connect_for_jumbo_frames(m);
  rx_driver rx(guest(), m.queue(0));
  raw_port inject(w().host_ns(), hostile_guest::vif);
  const auto small =
      test_frame(parse_mac(hostile_guest::mac), parse_mac("02:00:00:00:00:01"), 100, 3);
  const auto large =
      test_frame(parse_mac(hostile_guest::mac), parse_mac("02:00:00:00:00:01"), 9000, 4);
  begin_attack();
  for (int i = 0; i < 4; ++i) {
    rx.post_buffer(std::byte{0xAA});
  }
  ASSERT_TRUE(inject.send(small));
  ASSERT_TRUE(inject.send(large));
  const auto rsp = rx.responses(4);
  ASSERT_EQ(rsp.size(), 4U);
  std::vector<std::uint8_t> got;
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_GT(rsp[i].status, 0) << "slot " << i;
    const auto len = static_cast<std::size_t>(rsp[i].status);
    const auto* b = reinterpret_cast<const std::uint8_t*>(rx.buffer(i).data());
    EXPECT_EQ(rsp[i].offset, 0);
    if (i >= 1) {
      got.insert(got.end(), b, b + len);
    } else {
      EXPECT_TRUE(std::equal(small.begin(), small.end(), b)) << "first frame corrupted";
    }
    const bool untouched = std::all_of(b + len, b + 4096, [](std::uint8_t x) { return x == 0xAA; });
    EXPECT_TRUE(untouched) << "the backend wrote beyond the " << len << " bytes of slot " << i;
  }
  EXPECT_EQ(got, large) << "the 3-slot frame was not reassembled exactly";
  expect_contained();
}

/// RxStarvation with both RX timeouts short.
class RxStall : public RxStarvation {
 protected:
  world_options world_config() override {
    return {{"--rx-stall-timeout-ms", "3000", "--rx-drain-timeout-ms", "1000"}};
  }
  /// The host side of vif2.0 has a carrier (ip: LOWER_UP, not NO-CARRIER).
  bool has_carrier() {
    const nlohmann::json link = w().host_link_stats(hostile_guest::vif);
    if (!link.is_object() || !link.contains("flags")) {
      return false;
    }
    const auto& flags = link["flags"];
    return std::find(flags.begin(), flags.end(), "NO-CARRIER") == flags.end();
  }
};

TEST_F(RxStall, StalledGuestHasNoCarrierUntilItPostsBuffersAndGetsNoStaleFrames) {
  isolate_hostile_vif();
  manual_frontend m(guest(), 1, false, false);  // no RX buffer posted
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  raw_port inject(w().host_ns(), hostile_guest::vif);
  begin_attack();
  flood(inject, 200, flood_frame_bytes);  // before the stall: they queue in the TAP
  ASSERT_TRUE(wait_counter("rx_stalls", 1));
  EXPECT_TRUE(wait_until([&] { return !has_carrier(); }, state_timeout));
  EXPECT_GT(counter("rx_drops_stale"), 0U);
  rx_driver rx(guest(), m.queue(0));
  for (int i = 0; i < 8; ++i) {
    rx.post_buffer();
  }
  EXPECT_TRUE(wait_until([&] { return has_carrier(); }, state_timeout));
  const auto stale = counter("rx_drops_stale");
  flood(inject, 8, flood_frame_bytes - 1);  // fresh frames, told apart by their length
  const auto rsp = rx.responses(8);
  ASSERT_EQ(rsp.size(), 8U);
  for (const auto& r : rsp) {
    EXPECT_EQ(r.status, static_cast<std::int16_t>(flood_frame_bytes - 1));
  }
  EXPECT_EQ(counter("rx_drops_stale"), stale);
  EXPECT_EQ(counter("rx_stalls"), 1U);
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
