// What a queue carries over a daemon restart through its state file
// (queue_state.hpp): the counters, and the response journal that completes
// a sweep the killed daemon wrote into the ring but never published.

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "queue_fixture.hpp"
#include "queue_state.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::datapath::test {
namespace {

using namespace rings::test;  // NOLINT(google-build-using-namespace): frame builders

class QueueStateFile : public QueueTest {
 protected:
  QueueStateFile() { config_.state_file = dir_ + "/vif7.0-q0.state"; }
  ~QueueStateFile() override {
    if (queue_) {
      queue_->stop();
      queue_.reset();
    }
  }
  frame udp(std::size_t len) {
    return ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, len));
  }
  void send_and_receive(std::uint16_t id, std::size_t answered) {
    send_slots({one_slot(udp(40), 0, id)});
    ASSERT_TRUE(wait_tx_responses(answered));
    rings::vnet_header h{};
    frame got;
    ASSERT_TRUE(tap_read(h, got));
  }

  // The killed daemon's state: requests 7 and 8 consumed and acted on, their
  // responses journaled (checksummed as commit() does), the first written
  // into slot 0, rsp_prod not published. `damage`: a bit of the journal's
  // second response flipped afterwards.
  void leave_an_unpublished_sweep(bool damage) {
    start_queue();
    queue_->stop();
    queue_.reset();
    ::close(tap_peer_);
    tap_peer_ = -1;
    ASSERT_TRUE(tx_.write_request(one_slot(udp(50), 0, 7)));
    ASSERT_TRUE(tx_.write_request(one_slot(udp(60), 0, 8)));
    (void)tx_.push_requests_and_check_notify();
    config_.resume = true;
    queue_state dead(config_);  // the dead daemon's view of the same file
    ASSERT_TRUE(dead.carried_over());
    auto ring = rings::tx_back_ring::attach(ring_page(tx_ref_)).value();
    tx_journal journal(dead.data().tx);
    journal.stage(rings::tx_response{7, rings::netif_rsp::okay});
    journal.stage(rings::tx_response{8, rings::netif_rsp::okay});
    const std::uint64_t head = (std::uint64_t{0} << 32) | 2U;
    dead.data().tx.checksum.store(
        journal_checksum(head, dead.data().tx.slots.data(), 2 * sizeof(rings::tx_response)));
    dead.data().tx.base_and_count.store(head);
    ring.write_response(rings::tx_response{7, rings::netif_rsp::okay});  // slot 0 overwritten
    ASSERT_EQ(header(tx_ref_).rsp_prod, 0U);
    if (damage) {
      dead.data().tx.slots[1].status ^= 1;
    }
  }

  test_support::temp_dir tmp_{"unetback-queue-state-"};
  std::string dir_ = tmp_.path().string();
};

TEST_F(QueueStateFile, CountersCarryOverAResumeOfTheSameRings) {
  start_queue();
  send_and_receive(1, 1);
  restart_queue(restart::resume);
  EXPECT_EQ(counters().tx_packets, 1U);
  send_and_receive(2, 2);
  EXPECT_EQ(counters().tx_packets, 2U);
  EXPECT_EQ(counters().tx_requests, 2U);
}

TEST_F(QueueStateFile, AFreshConnectionStartsFromZero) {
  start_queue();
  send_and_receive(1, 1);
  restart_queue(restart::fresh);
  EXPECT_EQ(counters().tx_packets, 0U);
}

TEST_F(QueueStateFile, AFileWrittenForOtherRingsIsNotCarriedOver) {
  start_queue();
  send_and_receive(1, 1);
  queue_->stop();
  config_.resume = true;
  config_.tx_ring_ref = grant_ref{tx_ref_ + 100};
  const queue_state other(config_);
  EXPECT_FALSE(other.carried_over());
}

// The killed daemon consumed two requests, sent their packets, journaled the
// two responses and had written the first into the ring (destroying request
// 0) when it died: rsp_prod was never published. The successor must answer
// both from the journal, not parse the damaged slot or send the packets again.
TEST_F(QueueStateFile, ResumeCompletesTheSweepTheKilledDaemonDidNotPublish) {
  leave_an_unpublished_sweep(false);
  start_queue();
  ASSERT_TRUE(wait_tx_responses(2));
  EXPECT_EQ(tx_rsps_[0].id, 7);
  EXPECT_EQ(tx_rsps_[1].id, 8);
  EXPECT_EQ(tx_rsps_[1].status, rings::netif_rsp::okay);
  EXPECT_TRUE(faults().empty());
  rings::vnet_header h{};
  frame got;
  EXPECT_FALSE(tap_read(h, got, 100));  // not sent twice
  send_and_receive(9, 3);               // and the queue goes on from index 2
  EXPECT_EQ(tx_rsps_[2].id, 9);
  EXPECT_EQ(header(tx_ref_).rsp_prod, 3U);
}

// The same sweep, its journal damaged after the daemon wrote it: the record
// is not replayed into the guest's ring, and the connection is not resumed
// (start throws; the vif closes and the frontend connects afresh).
TEST_F(QueueStateFile, ADamagedJournalIsNotReplayedAndTheResumeIsRefused) {
  leave_an_unpublished_sweep(true);
  try {
    start_queue();
    FAIL() << "a damaged journal was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("damaged (checksum)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(header(tx_ref_).rsp_prod, 0U);  // nothing published from it
}

TEST_F(QueueStateFile, APublishedJournalIsNotReplayed) {
  start_queue();
  send_and_receive(1, 1);  // journaled at base 0, published: rsp_prod 1
  queue_->stop();
  ASSERT_TRUE(tx_.write_request(one_slot(udp(70), 0, 2)));
  (void)tx_.push_requests_and_check_notify();
  restart_queue(restart::resume);
  ASSERT_TRUE(wait_tx_responses(2));
  EXPECT_EQ(tx_rsps_[1].id, 2);
  rings::vnet_header h{};
  frame got;
  ASSERT_TRUE(tap_read(h, got));  // request 2 is processed, not answered from the journal
  EXPECT_EQ(got.size(), udp(70).size());
}

// A state file that is not private to the daemon (util/private_file.hpp) is
// refused like an unusable one: its content is never read back.
TEST_F(QueueStateFile, AFileOthersMayWriteIsRefusedAndNotCarriedOver) {
  start_queue();
  send_and_receive(1, 1);
  queue_->stop();
  queue_.reset();
  ASSERT_EQ(::chmod(config_.state_file.c_str(), 0666), 0);
  config_.resume = true;
  const queue_state other(config_);
  EXPECT_FALSE(other.carried_over());
}

TEST_F(QueueStateFile, ASymbolicLinkIsNotFollowed) {
  const std::string target = dir_ + "/elsewhere";
  ASSERT_EQ(::symlink(target.c_str(), config_.state_file.c_str()), 0);
  config_.resume = true;
  const queue_state s(config_);
  EXPECT_FALSE(s.carried_over());
  EXPECT_NE(::access(target.c_str(), F_OK), 0) << "the link was followed and its target created";
}

TEST_F(QueueStateFile, AnUnusableFileFallsBackToMemory) {
  config_.state_file = dir_;  // a directory
  start_queue();
  send_and_receive(1, 1);
  EXPECT_EQ(counters().tx_packets, 1U);
  config_.state_file = dir_ + "/vif7.0-q0.state";
}

}  // namespace
}  // namespace unetback::datapath::test
