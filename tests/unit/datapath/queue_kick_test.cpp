// queue::kick() (`unetbackctl kick`): the worker notifies the guest on every
// port of the queue and reads both rings again, so a queue whose guest's
// event was lost carries on.

#include <dirent.h>

#include <fstream>
#include <sstream>

#include "queue_fixture.hpp"

namespace unetback::datapath::test {
namespace {

using namespace rings::test;  // NOLINT(google-build-using-namespace): frame builders

// The state letter of this process's thread named `name` ('?' if none).
char thread_state(const std::string& name) {
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) {
    return '?';
  }
  char state = '?';
  while (const dirent* e = ::readdir(tasks)) {
    const std::string dir = std::string("/proc/self/task/") + e->d_name;
    std::string comm;
    std::getline(std::ifstream(dir + "/comm"), comm);
    if (comm != name) {
      continue;
    }
    std::string stat;
    std::getline(std::ifstream(dir + "/stat"), stat);
    const auto paren = stat.rfind(')');  // comm may hold spaces
    if (paren != std::string::npos && paren + 2 < stat.size()) {
      state = stat[paren + 2];
    }
  }
  ::closedir(tasks);
  return state;
}

class QueueKick : public QueueTest {
 protected:
  QueueKick() {
    config_.tuning.poll_us = 0;  // no busy-polling: an idle worker sleeps in poll()
    config_.split_event_channels = true;
    config_.rx_port = evtchn_port{rx_port};
  }
  // The worker went to sleep: its final check armed the rings' event
  // thresholds, so from here on only an event (or a kick) wakes it.
  bool worker_sleeps() {
    return wait_until([&] { return thread_state(config_.name) == 'S'; });
  }
};

TEST_F(QueueKick, NotifiesTheGuestOnEveryPortAndCountsIt) {
  start_queue();
  ASSERT_TRUE(worker_sleeps());
  const int tx_before = evtchn().notifies_to(tx_port);
  const int rx_before = evtchn().notifies_to(rx_port);
  ASSERT_TRUE(queue_->kick());
  ASSERT_TRUE(wait_until([&] { return counters().kicks == 1; }));
  EXPECT_EQ(evtchn().notifies_to(tx_port), tx_before + 1);
  EXPECT_EQ(evtchn().notifies_to(rx_port), rx_before + 1);
  ASSERT_TRUE(queue_->kick());
  ASSERT_TRUE(wait_until([&] { return counters().kicks == 2; }));
  EXPECT_TRUE(faults().empty());
}

TEST_F(QueueKick, RequestsWhoseEventWasLostAreServedAfterAKick) {
  start_queue();
  ASSERT_TRUE(worker_sleeps());
  const frame f = ipv4_frame(rings::ipproto_udp, ip_a, ip_b, udp_datagram(1, 2, 64));
  ASSERT_TRUE(tx_.write_request(one_slot(f)));
  // The guest publishes its request and asks for a kick that never arrives.
  ASSERT_TRUE(tx_.push_requests_and_check_notify());
  ASSERT_EQ(thread_state(config_.name), 'S');
  EXPECT_EQ(counters().tx_requests, 0U);

  ASSERT_TRUE(queue_->kick());
  expect_sent_and_answered(f, 1);
  EXPECT_EQ(counters().kicks, 1U);
  EXPECT_EQ(counters().tx_packets, 1U);
}

TEST_F(QueueKick, AStoppedQueueRefuses) {
  start_queue();
  queue_->stop();
  EXPECT_FALSE(queue_->kick());
}

}  // namespace
}  // namespace unetback::datapath::test
