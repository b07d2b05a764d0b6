// A queue with io-uring = true (worker_io.hpp) serves the guest as one on
// system calls does: every frame in order, counted once written, replies
// delivered, and a worker that sleeps between packets (its TX frames then go
// out with the sleep's system call) still wakes for each of them.

#include <gtest/gtest.h>

#include "queue_fixture.hpp"

namespace unetback::datapath::test {
namespace {

using namespace rings::test;  // NOLINT(google-build-using-namespace): frame builders

class QueueOverIoUring : public QueueTest {
 protected:
  QueueOverIoUring() {
    config_.tuning.io_uring = true;
    config_.tuning.poll_us = 0;  // sleep after every packet: the sleep carries the frames
  }
};

TEST_F(QueueOverIoUring, GuestFramesReachTheTapInOrderAndAreCounted) {
  start_queue();
  std::vector<rings::tx_request> slots;
  std::vector<frame> sent;
  for (std::uint16_t i = 0; i < 40; ++i) {
    sent.push_back(ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 20U + i)));
    slots.push_back(one_slot(sent.back(), 0, i));
  }
  send_slots(slots);
  for (const frame& f : sent) {
    rings::vnet_header h{};
    frame got;
    ASSERT_TRUE(tap_read(h, got)) << "tx_packets " << counters().tx_packets << " full "
                                  << counters().tx_drops_tap_full << " requests "
                                  << counters().tx_requests;
    EXPECT_EQ(got, f);
  }
  ASSERT_TRUE(wait_tx_responses(40));
  ASSERT_TRUE(wait_until([&] { return counters().tx_packets == 40; }));
  std::uint64_t bytes = 0;
  for (const frame& f : sent) {
    bytes += f.size();
  }
  EXPECT_EQ(counters().tx_bytes, bytes);
  EXPECT_EQ(counters().tx_errors, 0U);
  EXPECT_TRUE(faults().empty());
}

TEST_F(QueueOverIoUring, PingPongWithASleepBetweenEveryPacket) {
  start_queue();
  post_rx(64);
  for (std::uint16_t i = 0; i < 30; ++i) {
    const frame ping = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(5, 6, 30));
    send_slots({one_slot(ping, 0, i)});
    rings::vnet_header h{};
    frame got;
    ASSERT_TRUE(tap_read(h, got)) << "ping " << i;
    EXPECT_EQ(got, ping);
    const frame pong = ipv4_frame(rings::ipproto_udp, ip_b, ip_a, udp_datagram(6, 5, 30));
    tap_write(pong);
    ASSERT_TRUE(wait_rx_responses(i + 1U)) << "pong " << i;
    EXPECT_TRUE(std::equal(pong.begin(), pong.end(), rx_page(i)));
  }
  ASSERT_TRUE(wait_until([&] { return counters().tx_packets == 30; }));
  EXPECT_EQ(counters().rx_packets, 30U);
  EXPECT_TRUE(faults().empty());
}

}  // namespace
}  // namespace unetback::datapath::test
