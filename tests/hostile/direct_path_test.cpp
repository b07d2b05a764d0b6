// The direct path with a hostile guest on either end (issue #20;
// docs/direct-path.md): the hostile guest (vif2.0) is paired with the good
// guest (vif1.0).
// - As a sender it floods the good guest past the TAPs and the bridge: the
//   flood goes direct and stays bounded (a full ring drops, as a full TAP queue
//   would), and the good guest's own traffic with the host keeps passing. Here
//   the good guest keeps up with the flood, so the ring never fills, and the
//   rule that a queue reads its TAP after every burst of ring frames is not
//   what keeps its echoes alive (DirectPort.TheTapIsReadAfterABurstOfRingFrames
//   holds that rule).
// - A sender that faults mid-flood is unpaired with frames in flight, and the
//   good guest is served on.
// - As a receiver, its bad RX grants give error slots, as for TAP frames.

#include <cstdio>
#include <cstring>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

constexpr const char* good_mac = "00:16:3e:00:00:01";  // good_guest's vif1.0
constexpr std::size_t flood_page = 1;                  // tx_driver's page 0 goes to the host
constexpr std::uint16_t flood_frame_bytes = 1400;
constexpr std::size_t flood_batch = 64;

/// A field of a vif's `direct` stats, summed over its queues; 0 without them.
std::uint64_t direct_sum(const nlohmann::json& stats, const std::string& field) {
  if (!stats.is_array() || stats.empty() || !stats[0].contains("direct")) {
    return 0;
  }
  return sum_field(stats[0]["direct"]["queues"], field);
}

class DirectPath : public hostile_test {
 protected:
  world_options world_config() override { return {{"--direct-path", "true"}}; }

  /// Connects the hostile guest (its check packet to the host teaches the
  /// bridge its MAC), waits for the pair to go direct and puts a frame for
  /// the good guest in the flood page.
  tx_driver& pair_with_good_guest() {
    no_bridge_netfilter();
    tx_driver& t = connect_and_drive();
    EXPECT_TRUE(w().wait_log("direct path vif1.0 <-> vif2.0: on")) << "the pair never went direct";
    const auto f =
        test_frame(parse_mac(good_mac), parse_mac(hostile_guest::mac), flood_frame_bytes, 0x3C);
    std::memcpy(t.page(flood_page).data(), f.data(), f.size());
    return t;
  }

  /// br_netfilter, where its module is loaded, would keep every pair on the
  /// TAP path: switch it off for this world's host namespace.
  void no_bridge_netfilter() {
    const std::string switch_off =
        R"(for f in /proc/sys/net/bridge/bridge-nf-call-*; do [ ! -e "$f" ] || echo 0 > "$f"; done)";
    run_command({"ip", "netns", "exec", w().host_ns(), "sh", "-c", switch_off},
                w().logs() / "world.log");
  }

  /// Sends batches of frames to the good guest for `duration`; the frames
  /// the backend answered, each of them OKAY (a frame dropped on a full ring
  /// is answered OKAY too: the guest did nothing wrong).
  std::uint64_t flood(tx_driver& t, std::chrono::milliseconds duration) {
    std::uint64_t answered = 0;
    const auto end = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < end) {
      for (std::size_t i = 0; i < flood_batch; ++i) {
        t.put(t.slot(flood_page, 0, flood_frame_bytes));
      }
      t.push();
      const auto r = t.responses(flood_batch);
      for (const auto status : statuses(r)) {
        EXPECT_EQ(status, rings::netif_rsp::okay);
      }
      answered += r.size();
      if (r.size() < flood_batch) {
        break;  // the backend stopped answering: the assertions say why
      }
    }
    return answered;
  }

  /// Bytes the host received from vif2.0's guest through its TAP.
  std::uint64_t hostile_tap_rx_bytes() {
    const auto s = w().host_link_stats(hostile_guest::vif);
    return s.is_object() && s.contains("stats64")
               ? s["stats64"]["rx"].value("bytes", std::uint64_t{0})
               : 0;
  }
};

TEST_F(DirectPath, AFloodToAPairedGuestGoesDirectAndLeavesItsHostTrafficAlive) {
  tx_driver& t = pair_with_good_guest();
  const std::uint64_t tap_before = hostile_tap_rx_bytes();
  begin_attack();
  const std::uint64_t sent = flood(t, std::chrono::seconds(3));
  ASSERT_GT(sent, 0U);
  const auto hostile = w().stats(hostile_guest::id);
  const std::uint64_t moved = direct_sum(hostile, "tx_packets");
  const std::uint64_t dropped = direct_sum(hostile, "tx_drops_full");
  std::printf("flood: %llu frames sent, %llu moved direct, %llu dropped on a full ring\n",
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(moved),
              static_cast<unsigned long long>(dropped));
  EXPECT_EQ(moved + dropped, sent) << "every frame of the flood goes direct or is dropped";
  EXPECT_GT(direct_sum(w().stats(good_guest::id), "rx_packets"), 0U)
      << "the good guest's queue took nothing from the ring";
  EXPECT_LT(hostile_tap_rx_bytes() - tap_before, sent * flood_frame_bytes / 10)
      << "the flood went through the TAP";
  expect_vif_connected();
  expect_contained();
}

TEST_F(DirectPath, ASenderThatFaultsMidFloodIsUnpairedAndItsPeerServedOn) {
  tx_driver& t = pair_with_good_guest();
  begin_attack();
  ASSERT_GT(flood(t, std::chrono::seconds(1)), 0U);
  // The next batch is in the ring when the producer index jumps.
  for (std::size_t i = 0; i < flood_batch; ++i) {
    t.put(t.slot(flood_page, 0, flood_frame_bytes));
  }
  t.push();
  t.publish_req_prod(t.ring().req_prod_pvt() + rings::tx_front_ring::size + 1);
  t.kick();
  expect_vif_disabled("producer index overflow");
  EXPECT_TRUE(wait_until(
      [&] {
        const auto good = w().stats(good_guest::id);
        return good.is_array() && !good.empty() && good[0].contains("direct") &&
               good[0]["direct"]["peers"].empty();
      },
      state_timeout))
      << "the good guest still lists the faulted vif as its peer";
  expect_contained();
}

// The receiving side: the hostile guest is the paired receiver and posts RX
// buffers with bad grant refs while the good guest sends to it directly. Each
// bad buffer gets an error slot, as when the frame came through the TAP, the
// vif stays up, and the good guest is served on.
TEST_F(DirectPath, BadRxGrantsOfAPairedReceiverGiveErrorSlots) {
  no_bridge_netfilter();
  // Only direct frames reach the hostile guest's RX ring: the bridge floods
  // nothing to its port (no broadcast of the good guest eats a posted buffer).
  for (const char* flood : {"flood", "mcast_flood", "bcast_flood"}) {
    ASSERT_EQ(w().ip_host(
                  {"link", "set", "dev", hostile_guest::vif, "type", "bridge_slave", flood, "off"}),
              0)
        << flood;
  }
  manual_frontend m(guest(), 1, false, false);  // no RX buffer posted yet
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  tx_driver tx(guest(), m.queue(0));
  tx.send_valid();  // to the host: the bridge learns the hostile guest's MAC
  ASSERT_EQ(statuses(tx.responses(1)), std::vector<std::int16_t>{rings::netif_rsp::okay});
  ASSERT_TRUE(w().wait_log("direct path vif1.0 <-> vif2.0: on")) << "the pair never went direct";
  rx_driver rx(guest(), m.queue(0));
  raw_port good_sends(good().netns(), "eth0");  // the good guest's own interface
  const mac_bytes to = parse_mac(hostile_guest::mac);
  const mac_bytes from = parse_mac(good_mac);
  const auto before = counter("rx_copy_errors");
  begin_attack();
  sim::guest_domain& d = guest().domain();
  const grant_ref read_only = d.grant_access(d.alloc_page(), domid{0}, sim::grant_mode::read_only);
  const grant_ref foreign = d.grant_access(d.alloc_page(), domid{7}, sim::grant_mode::read_write);
  const std::vector<grant_ref> bad{grant_ref(0xFFFFFFFFU), grant_ref(3), read_only, foreign};
  std::uint8_t seed = 0;
  for (const grant_ref gref : bad) {
    rx.post(gref);
    ASSERT_TRUE(good_sends.send(test_frame(to, from, 200, seed++)));
    const auto rsp = rx.responses(1);
    ASSERT_EQ(rsp.size(), 1U) << "no RX response for gref " << gref.value();
    EXPECT_EQ(rsp[0].status, rings::netif_rsp::error) << "gref " << gref.value();
  }
  EXPECT_EQ(counter("rx_copy_errors"), before + bad.size());
  rx.post_buffer();
  ASSERT_TRUE(good_sends.send(test_frame(to, from, 200, seed++)));
  const auto good_rsp = rx.responses(1);
  ASSERT_EQ(good_rsp.size(), 1U);
  EXPECT_EQ(good_rsp[0].status, 200);
  EXPECT_EQ(direct_sum(w().stats(hostile_guest::id), "rx_packets"), bad.size() + 1)
      << "the frames did not all come over the direct path";
  expect_vif_connected();
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
