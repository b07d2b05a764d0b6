// The control plane's pairing of vifs on the direct path (pairing.hpp): rings
// between paired vifs' queues, the tables their ports use, and tear-down.

#include "unetback/direct/pairing.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <deque>
#include <thread>
#include <vector>

#include "queue_end.hpp"
#include "test_guests.hpp"

namespace unetback::direct {
namespace {

using rings::test::frame;
using test::a_to_b;
using test::addressed;
using test::guest_a;
using test::guest_b;
using test::guest_c;
using test::queue_end;

constexpr vif_key vif_a = (1U << 16) | 0;
constexpr vif_key vif_b = (2U << 16) | 0;
constexpr vif_key vif_c = (3U << 16) | 0;

/// A vif of `queues` queues whose guest has `mac`.
struct test_vif {
  tap::mac_address mac;
  std::deque<queue_end> queues;

  test_vif(tap::mac_address m, unsigned n) : mac(m), queues(n) {}

  [[nodiscard]] paired_vif as_paired() const {
    paired_vif v;
    v.guest = direct_peer{mac, 1500, rings::offload_features{}, 0};
    for (const auto& q : queues) {
      v.queues.push_back(q.port.get());
    }
    return v;
  }
  /// A frame from this vif's guest to `to`.
  [[nodiscard]] frame to(const test_vif& peer) const {
    return addressed(a_to_b(80), peer.mac, mac);
  }
};

std::array<std::pair<vif_key, vif_key>, 1> just(vif_key a, vif_key b) {
  return {{{a, b}}};
}

class Pairing : public ::testing::Test {
 protected:
  /// A vif of `queues` queues whose guest has `mac`, added under `key`.
  const test_vif& add(vif_key key, tap::mac_address mac, unsigned queues) {
    const auto& v = vifs_.emplace_back(mac, queues);
    p.add(key, v.as_paired());
    return v;
  }

  std::deque<test_vif> vifs_;  // declared before the pairing: its ports outlive it
  pairing p{1 << 20, 70'000};
};

TEST_F(Pairing, PairedVifsSendToEachOtherQueueByQueueModuloThePeersQueues) {
  const auto& a = add(vif_a, guest_a, 2);
  const auto& b = add(vif_b, guest_b, 1);
  EXPECT_EQ(p.ring_count(), 0U);
  p.set_pairs(just(vif_b, vif_a));
  EXPECT_TRUE(p.paired(vif_a, vif_b));
  EXPECT_EQ(p.ring_count(), 3U);  // A's two queues to B's one, B's one to A

  const auto ab = a.to(b);
  ASSERT_GT(a.queues[1].write(ab), 0);
  EXPECT_TRUE(a.queues[1].host_received().empty());
  EXPECT_EQ(b.queues[0].read(), ab);
  const auto ba = b.to(a);
  ASSERT_GT(b.queues[0].write(ba), 0);
  EXPECT_TRUE(a.queues[1].read().empty()) << "B's queue 0 sends to A's queue 0 only";
  EXPECT_EQ(a.queues[0].read(), ba);
}

TEST_F(Pairing, ANewPairWakesAConsumerThatWentToSleepBeforeIt) {
  const auto& a = add(vif_a, guest_a, 1);
  const auto& b = add(vif_b, guest_b, 1);
  EXPECT_TRUE(b.queues[0].read().empty());  // B's worker sleeps
  p.set_pairs(just(vif_a, vif_b));
  ASSERT_GT(a.queues[0].write(a.to(b)), 0);
  EXPECT_TRUE(b.queues[0].readable()) << "the first frame on a new ring rang no doorbell";
}

TEST_F(Pairing, UnpairedVifsGoBackToTheTapAndTheirRingsAreFreed) {
  const auto& a = add(vif_a, guest_a, 2);
  const auto& b = add(vif_b, guest_b, 2);
  p.set_pairs(just(vif_a, vif_b));
  EXPECT_EQ(p.ring_count(), 4U);
  p.set_pairs({});
  EXPECT_EQ(p.ring_count(), 0U);
  const auto ab = a.to(b);
  ASSERT_GT(a.queues[1].write(ab), 0);
  EXPECT_EQ(a.queues[1].host_received(), ab);
}

TEST_F(Pairing, ARemovedVifLeavesNoLaneButItsFormerPeersStayPaired) {
  const auto& a = add(vif_a, guest_a, 1);
  const auto& b = add(vif_b, guest_b, 1);
  const auto& c = add(vif_c, guest_c, 1);
  const std::array<std::pair<vif_key, vif_key>, 3> all{
      {{vif_a, vif_b}, {vif_b, vif_c}, {vif_a, vif_c}}};
  p.set_pairs(all);
  EXPECT_EQ(p.ring_count(), 6U);
  p.remove(vif_b);
  EXPECT_EQ(p.vifs(), (std::vector<vif_key>{vif_a, vif_c}));
  EXPECT_EQ(p.ring_count(), 2U);
  const auto ab = a.to(b);
  ASSERT_GT(a.queues[0].write(ab), 0);
  EXPECT_EQ(a.queues[0].host_received(), ab)
      << "a frame for the removed vif did not go to the host";
  const auto ac = a.to(c);
  ASSERT_GT(a.queues[0].write(ac), 0);
  EXPECT_EQ(c.queues[0].read(), ac);
}

TEST_F(Pairing, RefusesAVifTwiceOrWithoutQueuesAndIgnoresUnknownKeys) {
  const auto& a = add(vif_a, guest_a, 1);
  EXPECT_THROW(p.add(vif_a, a.as_paired()), std::invalid_argument);
  EXPECT_THROW(p.add(vif_b, paired_vif{}), std::invalid_argument);
  p.set_pairs(just(vif_a, vif_c));
  p.set_pairs(just(vif_a, vif_a));
  EXPECT_FALSE(p.paired(vif_a, vif_c));
  EXPECT_EQ(p.ring_count(), 0U);
  p.remove(vif_c);
  EXPECT_THROW(pairing(1 << 20, 0), std::invalid_argument);
}

TEST_F(Pairing, RepairingWhileWorkersRunLosesNoPortAndEndsDirect) {
  // Each vif's worker sends to the other and reads without pause while the
  // control plane pairs and unpairs them: no call may touch a freed ring or
  // table (ASan, TSan), and once paired at the end, frames go direct.
  const auto& a = add(vif_a, guest_a, 2);
  const auto& b = add(vif_b, guest_b, 1);
  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  const auto worker = [&stop, &rounds](const test_vif& self, const test_vif& peer) {
    const auto f = self.to(peer);
    std::vector<std::byte> buf(70'000);
    while (!stop.load()) {
      for (const auto& q : self.queues) {
        (void)q.write(f);
        (void)q.port->read_frame(buf);
        (void)q.host_received();
      }
      rounds.fetch_add(1);
    }
  };
  std::thread wa(worker, std::cref(a), std::cref(b));
  std::thread wb(worker, std::cref(b), std::cref(a));
  for (int i = 0; i < 200 || rounds.load() < 2000; ++i) {
    if (i % 2 == 0) {
      p.set_pairs(just(vif_a, vif_b));
    } else {
      p.set_pairs({});
    }
  }
  p.set_pairs(just(vif_a, vif_b));
  stop = true;
  wa.join();
  wb.join();
  std::vector<std::byte> buf(70'000);
  while (b.queues[0].port->read_frame(buf) > 0) {
  }
  const auto ab = a.to(b);
  ASSERT_GT(a.queues[0].write(ab), 0);
  EXPECT_EQ(b.queues[0].read(), ab);
  EXPECT_GT(a.queues[0].port->counters().tx_packets.load(), 0U);
}

}  // namespace
}  // namespace unetback::direct
