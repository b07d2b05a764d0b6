// The frame port that puts the direct path in a queue's data path
// (direct_port.hpp): two vifs' queues, each with a socketpair for its TAP.

#include "unetback/direct/direct_port.hpp"

#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "queue_end.hpp"
#include "test_guests.hpp"
#include "unetback/direct/fdb_refresh.hpp"

namespace unetback::direct {
namespace {

using rings::test::frame;
using test::a_to_b;
using test::guest_a;
using test::guest_b;
using test::queue_end;
using test::vnet_bytes;

/// Queue A's lane to queue B over `ring`, and B's table with that ring inbound.
struct one_lane {
  lane_table a;
  lane_table b;
  one_lane(const queue_end& qb, handoff_ring& ring) {
    a.source_mac = guest_a;
    a.peers.push_back(direct_peer{guest_b, 1500, rings::offload_features{}, 0});
    a.lanes.push_back(outbound_lane{&ring, &qb.port->bell()});
    b.source_mac = guest_b;
    b.inbound.push_back(&ring);
  }
};

/// Two queues, A's and B's, and (after pair()) a lane from A to B.
class DirectPort : public ::testing::Test {
 protected:
  /// A ring of `ring_bytes` from A to B, in both ports' tables.
  void pair(std::size_t ring_bytes = 1 << 20, std::size_t max_record = 70'000) {
    ring_ = std::make_unique<handoff_ring>(ring_bytes, max_record);
    lane_ = std::make_unique<one_lane>(qb, *ring_);
    qa.port->publish(&lane_->a);
    qb.port->publish(&lane_->b);
  }

  const queue_end qa;
  const queue_end qb;
  std::unique_ptr<handoff_ring> ring_;
  std::unique_ptr<one_lane> lane_;
};

TEST_F(DirectPort, WithoutATableEveryFrameGoesThroughTheTap) {
  const auto f = a_to_b(100);
  EXPECT_EQ(qa.write(f), static_cast<long>(vnet_bytes + f.size()));
  EXPECT_EQ(qa.host_received(), f);
  qa.host_sends(f);
  EXPECT_EQ(qa.read(), f);
  EXPECT_EQ(qa.port->counters().to_host[0].load(), 0U);
}

TEST_F(DirectPort, AFrameForAPeerSkipsTheTapAndRingsThePeersDoorbell) {
  pair();
  EXPECT_EQ(qa.port->publish(&lane_->a), &lane_->a) << "publish returns the table it replaces";
  EXPECT_TRUE(qb.read().empty());  // B's worker found nothing and sleeps: the ring is armed
  EXPECT_FALSE(qb.readable());

  const auto f = a_to_b(300);
  EXPECT_EQ(qa.write(f), static_cast<long>(vnet_bytes + f.size()));
  EXPECT_TRUE(qa.host_received().empty()) << "the frame went through A's TAP";
  EXPECT_TRUE(qb.readable()) << "B's doorbell was not rung";
  EXPECT_EQ(qb.read(), f);
  EXPECT_EQ(qa.port->counters().tx_packets.load(), 1U);
  EXPECT_EQ(qa.port->counters().tx_bytes.load(), f.size());
  EXPECT_EQ(qb.port->counters().rx_packets.load(), 1U);
  EXPECT_EQ(qb.port->counters().rx_bytes.load(), f.size());
}

TEST_F(DirectPort, TheDoorbellIsClearedOnceTheRingsRunDry) {
  pair();
  EXPECT_TRUE(qb.read().empty());
  for (int i = 0; i < 3; ++i) {
    ASSERT_GT(qa.write(a_to_b(64)), 0);
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(qb.read().empty());
  }
  EXPECT_TRUE(qb.read().empty());
  EXPECT_FALSE(qb.readable()) << "an empty queue stays readable: its worker would spin";
  ASSERT_GT(qa.write(a_to_b(64)), 0);
  EXPECT_TRUE(qb.readable()) << "a push after the drain did not ring the doorbell";
}

// A peer rings in two steps, the eventfd write and then the count. A look
// between the two finds the rings empty and the count unchanged; the port must
// not stay readable past the next empty look, or its worker spins until the
// count lands (on a busy host, the spinning is what delays it).
TEST_F(DirectPort, ADoorbellRungButNotYetCountedIsClearedByTheNextEmptyLook) {
  pair();
  EXPECT_TRUE(qb.read().empty());
  const std::uint64_t one = 1;
  ASSERT_EQ(::write(qb.port->bell().fd(), &one, sizeof one), 8);  // written, not counted
  ASSERT_TRUE(qb.readable());
  EXPECT_TRUE(qb.read().empty());
  EXPECT_FALSE(qb.readable()) << "the worker would wake again at once and find nothing";
  ASSERT_GT(qa.write(a_to_b(64)), 0);
  EXPECT_TRUE(qb.readable()) << "a push after the clearing did not ring the doorbell";
  EXPECT_FALSE(qb.read().empty());
}

TEST_F(DirectPort, FramesTheRulesRefuseGoThroughTheTapCountedByReason) {
  pair();

  auto broadcast = a_to_b(64);
  std::fill_n(broadcast.begin(), 6, std::byte{0xFF});
  auto spoofed = a_to_b(64);
  spoofed[11] = std::byte{0x09};
  auto stranger = a_to_b(64);
  stranger[5] = std::byte{0x07};
  for (const auto& f : {broadcast, spoofed, stranger}) {
    EXPECT_GT(qa.write(f), 0);
    EXPECT_EQ(qa.host_received(), f);
  }
  const auto& to_host = qa.port->counters().to_host;
  EXPECT_EQ(to_host[static_cast<std::size_t>(route_reason::group_destination)].load(), 1U);
  EXPECT_EQ(to_host[static_cast<std::size_t>(route_reason::spoofed_source)].load(), 1U);
  EXPECT_EQ(to_host[static_cast<std::size_t>(route_reason::not_a_peer)].load(), 1U);
  EXPECT_EQ(qa.port->counters().tx_packets.load(), 0U);
}

TEST_F(DirectPort, ARequestedLearningFrameGoesThroughTheTapBeforeTheNextDirectFrame) {
  pair();
  qa.port->request_learning_frame();
  auto spoofed = a_to_b(64);
  spoofed[11] = std::byte{0x09};
  ASSERT_GT(qa.write(spoofed), 0);  // to the host, which learns nothing of A from it
  EXPECT_EQ(qa.host_received(), spoofed);
  EXPECT_TRUE(qa.host_received().empty()) << "a learning frame went with a TAP-path frame";

  const auto f = a_to_b(200);
  ASSERT_GT(qa.write(f), 0);
  const auto learning = make_learning_frame(guest_a);
  EXPECT_EQ(qa.host_received(), frame(learning.begin(), learning.end()));
  EXPECT_EQ(qb.read(), f) << "the frame itself still went direct";
  ASSERT_GT(qa.write(f), 0);
  EXPECT_TRUE(qa.host_received().empty()) << "one request, one learning frame";
  EXPECT_EQ(qa.port->counters().learning_frames.load(), 1U);
  EXPECT_EQ(qa.port->counters().tx_packets.load(), 2U);
}

TEST_F(DirectPort, AFullRingDropsTheFrameAsAFullTapWould) {
  pair(4096, 1600);
  const auto f = a_to_b(1000);
  ASSERT_GT(qa.write(f), 0);
  ASSERT_GT(qa.write(f), 0);
  int written = 2;
  while (qa.write(f) > 0 && written < 10) {
    ++written;
  }
  EXPECT_LT(written, 10) << "a 4 KiB ring took ten 1 KiB frames";
  EXPECT_EQ(qa.port->counters().tx_drops_full.load(), 1U);
  EXPECT_TRUE(qa.host_received().empty()) << "a dropped frame went to the host instead";
}

TEST_F(DirectPort, TheTapIsReadAfterABurstOfRingFrames) {
  pair();
  const auto from_a = a_to_b(64);
  const auto from_host = a_to_b(200);
  for (unsigned i = 0; i < 2 * direct_port::ring_burst; ++i) {
    ASSERT_GT(qa.write(from_a), 0);
  }
  qb.host_sends(from_host);
  for (unsigned i = 0; i < direct_port::ring_burst; ++i) {
    EXPECT_EQ(qb.read(), from_a) << "read " << i;
  }
  EXPECT_EQ(qb.read(), from_host) << "the host's frame waited behind more than a burst";
  for (unsigned i = 0; i < direct_port::ring_burst; ++i) {
    EXPECT_EQ(qb.read(), from_a);
  }
  EXPECT_TRUE(qb.read().empty());
}

TEST_F(DirectPort, AFrameInAnotherShapeThanTheTxPathsGoesThroughTheTap) {
  pair();
  auto f = a_to_b(64);
  std::vector<std::byte> whole(vnet_bytes);
  whole.insert(whole.end(), f.begin(), f.end());
  const std::array<iovec, 1> iov{iovec{whole.data(), whole.size()}};
  EXPECT_GT(qa.port->write_frame(iov), 0);
  EXPECT_EQ(qa.host_received(), f);
}

TEST_F(DirectPort, AWorkerThatStopsReadingEarlyIsWokenWhileFramesRemain) {
  // A worker may stop reading with frames left (its guest's RX buffers ran
  // out, or its batch ended) and poll: like a TAP's fd, the port's must then
  // be readable. The consumer here takes one frame per wake-up; the producer
  // waits for it to catch up, then pushes two frames at once after a varying
  // delay, so that pushes land while the consumer finds its ring empty and
  // clears its doorbell. A poll that times out with a frame waiting is a lost
  // wake-up.
  pair(1 << 16);
  constexpr int pairs = 20'000;
  std::atomic<int> taken{0};
  std::atomic<int> pushed{0};  // counted after each push returns
  std::atomic<bool> give_up{false};
  std::thread producer([&] {
    const auto f = a_to_b(64);
    for (int i = 0; i < pairs && !give_up.load(); ++i) {
      while (taken.load() < 2 * i && !give_up.load()) {
      }
      for (int spin = 0; spin < (i * 7) % 300; ++spin) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
      }
      ASSERT_GT(qa.write(f), 0);
      pushed.fetch_add(1);
      ASSERT_GT(qa.write(f), 0);
      pushed.fetch_add(1);
    }
  });
  std::vector<std::byte> buf(70'000);
  bool lost = false;
  // A loaded host may not run the producer for a while: only a poll that
  // times out while a frame pushed before it began is still waiting counts
  // as a lost wake-up; the whole test has a generous deadline.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (taken.load() < 2 * pairs && std::chrono::steady_clock::now() < deadline) {
    const int waiting = pushed.load() - taken.load();
    pollfd pfd{qb.port->fd(), POLLIN, 0};
    if (::poll(&pfd, 1, 500) == 0) {
      if (waiting > 0) {
        lost = true;
        break;
      }
      continue;
    }
    if (qb.port->read_frame(buf) > 0) {
      taken.fetch_add(1);
    }
  }
  give_up = true;
  producer.join();
  EXPECT_FALSE(lost) << "a frame waited in the ring while the port was not readable, after "
                     << taken.load() << " frames";
  EXPECT_EQ(taken.load(), 2 * pairs);
}

TEST_F(DirectPort, PublishReturnsTheOldTableOnlyWhenNoCallCanStillUseIt) {
  // A worker writes frames without pause while the control plane swaps the
  // table and frees the old one as soon as publish() returns it: a call
  // still using a freed table is a use-after-free (ASan) or a race (TSan),
  // and a scribbled-over table would send frames to the host.
  handoff_ring ring(1 << 16, 70'000);
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread worker([&] {
    const auto f = a_to_b(64);
    std::vector<std::byte> buf(70'000);
    while (!stop.load()) {
      (void)qa.write(f);
      (void)qb.port->read_frame(buf);
      (void)qa.host_received();
      writes.fetch_add(1);
    }
  });
  auto current = std::make_unique<one_lane>(qb, ring);
  qa.port->publish(&current->a);
  for (int i = 0; i < 1000 || writes.load() < 2000; ++i) {
    auto next = std::make_unique<one_lane>(qb, ring);
    EXPECT_EQ(qa.port->publish(&next->a), &current->a);
    current->a.peers.assign(1, direct_peer{});  // scribble, as a reused allocation would
    current = std::move(next);
  }
  stop = true;
  worker.join();
  EXPECT_EQ(qa.port->counters().to_host[static_cast<std::size_t>(route_reason::not_a_peer)], 0U);
  EXPECT_GT(qa.port->counters().tx_packets.load(), 0U);
}

}  // namespace
}  // namespace unetback::direct
