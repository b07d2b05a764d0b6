// The worker's adaptive busy-poll window (backend/datapath/src/poll_window.hpp):
// a queue whose guest answers faster than the maximum window must end up
// spinning instead of sleeping through every round trip (the 2-queue slowdown
// of issue #5: one dom0 vCPU wake-up per round trip), and a sparse or idle
// queue must stop spinning.

#include "poll_window.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace unetback::datapath {
namespace {

using std::chrono::microseconds;

TEST(PollWindow, StartsClosedSoAnIdleQueueNeverSpins) {
  const poll_window w(microseconds{500});
  EXPECT_EQ(w.window(), microseconds{0});
}

TEST(PollWindow, GuestAnsweringWithinTheMaximumOpensTheWindowToCoverItsGap) {
  poll_window w(microseconds{500});
  // Round trips of 300 us: each wake-up came after the window, within the maximum.
  for (int i = 0; i < 10 && w.window() < microseconds{300}; ++i) {
    w.on_wake_with_work(microseconds{300});
  }
  EXPECT_GE(w.window(), microseconds{300});
  EXPECT_LE(w.window(), microseconds{500});
}

TEST(PollWindow, NeverGrowsBeyondTheConfiguredMaximum) {
  poll_window w(microseconds{100});
  for (int i = 0; i < 50; ++i) {
    w.on_wake_with_work(microseconds{90});
  }
  EXPECT_EQ(w.window(), microseconds{100});
}

TEST(PollWindow, SparseTrafficClosesTheWindowAgain) {
  poll_window w(microseconds{500});
  for (int i = 0; i < 20; ++i) {
    w.on_wake_with_work(microseconds{400});
  }
  ASSERT_GT(w.window(), microseconds{0});
  // Gaps longer than the maximum: spinning would only burn CPU.
  for (int i = 0; i < 10; ++i) {
    w.on_wake_with_work(std::chrono::milliseconds{20});
  }
  EXPECT_EQ(w.window(), microseconds{0});
}

TEST(PollWindow, AGapTheWindowAlreadyCoversChangesNothing) {
  poll_window w(microseconds{500});
  for (int i = 0; i < 6; ++i) {
    w.on_wake_with_work(microseconds{150});
  }
  const microseconds settled = w.window();
  w.on_wake_with_work(microseconds{20});
  EXPECT_EQ(w.window(), settled);
}

TEST(PollWindow, ZeroMaximumTurnsPollingOff) {
  poll_window w(microseconds{0});
  for (int i = 0; i < 10; ++i) {
    w.on_wake_with_work(microseconds{1});
  }
  EXPECT_EQ(w.window(), microseconds{0});
}

}  // namespace
}  // namespace unetback::datapath
