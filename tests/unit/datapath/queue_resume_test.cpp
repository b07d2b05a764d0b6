// Resuming a queue on rings a previous worker served (daemon restart after
// kill -9, `unetbackctl enable`): a new queue object attaches at
// req_cons = rsp_prod_pvt = the shared rsp_prod, processes again what the
// dead worker consumed but never answered (TX), reuses the RX buffers the
// guest posted beyond rsp_prod, re-arms req_event and kicks the frontend once.

#include <unistd.h>

#include "queue_fixture.hpp"

namespace unetback::datapath::test {
namespace {

using namespace rings::test;  // NOLINT(google-build-using-namespace): frame builders

class QueueResume : public QueueTest {
 protected:
  /// The new queue's event channel (evtchn() is the first queue's, gone).
  fake_event_channel& current_channel() { return *platform_.channels.back(); }
  /// Publishes `slots` without kicking, as a guest whose kick went to a dead
  /// backend (or whose req_event said no kick was needed).
  void publish_without_kick(const std::vector<rings::tx_request>& slots) {
    for (const auto& s : slots) {
      ASSERT_TRUE(tx_.write_request(s));
    }
    (void)tx_.push_requests_and_check_notify();
  }
  frame udp(std::size_t len) {
    return ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, len));
  }
};

TEST_F(QueueResume, TxRequestsLeftUnansweredByTheDeadWorkerAreSentAfterResume) {
  start_queue();
  send_slots({one_slot(udp(40), 0, 1)});
  ASSERT_TRUE(wait_tx_responses(1));
  rings::vnet_header h{};
  frame got;
  ASSERT_TRUE(tap_read(h, got));
  queue_->stop();  // the worker is gone; what follows nobody consumes
  publish_without_kick({one_slot(udp(50), 0, 2), one_slot(udp(60), 0, 3)});
  restart_queue(restart::resume);
  ASSERT_TRUE(tap_read(h, got));
  EXPECT_EQ(got.size(), udp(50).size());
  ASSERT_TRUE(tap_read(h, got));
  EXPECT_EQ(got.size(), udp(60).size());
  ASSERT_TRUE(wait_tx_responses(3));
  EXPECT_EQ(tx_rsps_[1].id, 2);
  EXPECT_EQ(tx_rsps_[2].id, 3);
  EXPECT_EQ(header(tx_ref_).rsp_prod, 3U);
}

TEST_F(QueueResume, ResumeStartsAtTheSharedRspProdNotAtReqProd) {
  start_queue();
  queue_->stop();
  // The dead worker had consumed both requests (its private req_cons was 2)
  // but published no response: the shared rsp_prod is still 0.
  publish_without_kick({one_slot(udp(30), 0, 7), one_slot(udp(31), 0, 8)});
  restart_queue(restart::resume);
  ASSERT_TRUE(wait_tx_responses(2));
  EXPECT_EQ(tx_rsps_[0].id, 7);
  EXPECT_EQ(counters().tx_packets, 2U);
  const std::string dump = queue_->ring_dump();
  EXPECT_NE(dump.find("rsp prod 2 (base)"), std::string::npos) << dump;
}

TEST_F(QueueResume, RxBuffersPostedBeyondRspProdAreReused) {
  start_queue();
  post_rx(4);
  tap_write(udp(100));
  ASSERT_TRUE(wait_rx_responses(1));
  EXPECT_EQ(rx_rsps_[0].id, 100);
  restart_queue(restart::resume);
  tap_write(udp(120));
  ASSERT_TRUE(wait_rx_responses(2));
  EXPECT_EQ(rx_rsps_[1].id, 101);  // the next posted buffer, not a lost one
  EXPECT_EQ(rx_rsps_[1].status, static_cast<std::int16_t>(udp(120).size()));
  EXPECT_EQ(std::memcmp(rx_page(1), udp(120).data(), udp(120).size()), 0);
}

// The resume kick is part of start(); a stopped queue's counts are final.
TEST_F(QueueResume, ResumeKicksTheFrontendOnceAndAFreshStartDoesNot) {
  start_queue();
  queue_->stop();
  EXPECT_EQ(evtchn().notifies_to(tx_port), 0);
  restart_queue(restart::resume);
  queue_->stop();
  EXPECT_EQ(current_channel().notifies_to(tx_port), 1);
  EXPECT_EQ(counters().notify_sent, 1U);
}

TEST_F(QueueResume, SplitChannelsGetOneKickEach) {
  config_.split_event_channels = true;
  config_.rx_port = evtchn_port{rx_port};
  start_queue();
  restart_queue(restart::resume);
  queue_->stop();
  EXPECT_EQ(current_channel().notifies_to(tx_port), 1);
  EXPECT_EQ(current_channel().notifies_to(rx_port), 1);
}

TEST_F(QueueResume, ReqEventIsReArmedSoTheGuestsNextKickIsHeard) {
  start_queue();
  queue_->stop();
  rings::publish(header(tx_ref_).req_event, 1000U);  // stale: the guest would never kick
  restart_queue(restart::resume);
  ASSERT_TRUE(wait_until([&] { return rings::load_acquire(header(tx_ref_).req_event) == 1U; }));
  ASSERT_TRUE(tx_.write_request(one_slot(udp(40), 0, 9)));
  ASSERT_TRUE(tx_.push_requests_and_check_notify());  // req_event is 1 again: kick
  current_channel().kick(tx_port);
  ASSERT_TRUE(wait_tx_responses(1));
  EXPECT_EQ(tx_rsps_[0].id, 9);
}

}  // namespace
}  // namespace unetback::datapath::test
