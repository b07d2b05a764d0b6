// The worker's interrupt moderation (backend/datapath/src/coalescer.hpp): a
// stream whose work keeps arriving within the interval gets timed sleeps
// instead of a wake-up per packet; a ping-pong, whose request and reply
// alternate with the guest's think time, must not pay the interval.

#include "coalescer.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace unetback::datapath {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(Coalescer, OffWhateverTheGaps) {
  coalescer c(microseconds{0});
  for (int i = 0; i < 10; ++i) {
    c.on_work(microseconds{0});
  }
  EXPECT_FALSE(c.wanted());
}

TEST(Coalescer, StartsAfterTwoShortGapsInARow) {
  coalescer c(microseconds{500});
  EXPECT_FALSE(c.wanted());
  c.on_work(microseconds{100});
  EXPECT_FALSE(c.wanted());  // one short gap: a request and its reply look like this
  c.on_work(microseconds{100});
  EXPECT_TRUE(c.wanted());
}

TEST(Coalescer, PingPongNeverCoalesces) {
  coalescer c(microseconds{500});
  for (int i = 0; i < 20; ++i) {
    c.on_work(microseconds{200});  // the host's reply, soon after the request
    EXPECT_FALSE(c.wanted());
    c.on_work(milliseconds{2});  // the guest's next request, a round trip later
    EXPECT_FALSE(c.wanted());
  }
}

TEST(Coalescer, KeepsCoalescingWhileTheTimedSleepsFindWork) {
  coalescer c(microseconds{500});
  c.on_work(microseconds{10});
  c.on_work(microseconds{10});
  for (int i = 0; i < 100; ++i) {
    c.after_sleep(true);
    EXPECT_TRUE(c.wanted());
  }
}

TEST(Coalescer, ATimedSleepThatFoundNothingEndsIt) {
  coalescer c(microseconds{500});
  c.on_work(microseconds{10});
  c.on_work(microseconds{10});
  c.after_sleep(false);
  EXPECT_FALSE(c.wanted());
  c.on_work(microseconds{10});
  EXPECT_FALSE(c.wanted());  // two short gaps again before the next one
  c.on_work(microseconds{10});
  EXPECT_TRUE(c.wanted());
}

TEST(Coalescer, ALongGapEndsIt) {
  coalescer c(microseconds{500});
  c.on_work(microseconds{10});
  c.on_work(microseconds{10});
  c.on_work(microseconds{500});  // not sooner than the interval
  EXPECT_FALSE(c.wanted());
}

}  // namespace
}  // namespace unetback::datapath
