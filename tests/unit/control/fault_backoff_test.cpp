// The wait a faulting frontend serves before it may connect again.

#include "unetback/control/fault_backoff.hpp"

#include <gtest/gtest.h>

namespace unetback::control {
namespace {

using namespace std::chrono_literals;
using ms = std::chrono::milliseconds;

constexpr fault_backoff::clock::time_point t0{std::chrono::seconds(1000)};

TEST(FaultBackoff, TheFirstFaultIsFreeThenTheWaitDoublesUpToTheMost) {
  fault_backoff b(10s);
  auto now = t0;
  std::vector<ms> waits;
  for (int i = 0; i < 10; ++i) {
    waits.push_back(b.on_fault(now));
    now = b.not_before();  // the guest faults again as soon as it may connect
  }
  EXPECT_EQ(waits, (std::vector<ms>{0ms, 100ms, 200ms, 400ms, 800ms, 1600ms, 3200ms, 6400ms,
                                    10000ms, 10000ms}));
  EXPECT_EQ(b.faults_in_a_row(), 10U);
}

TEST(FaultBackoff, NotBeforeIsTheFaultTimePlusTheWait) {
  fault_backoff b(10s);
  (void)b.on_fault(t0);
  EXPECT_EQ(b.not_before(), t0);
  EXPECT_EQ(b.on_fault(t0 + 1s), 100ms);
  EXPECT_EQ(b.not_before(), t0 + 1s + 100ms);
}

TEST(FaultBackoff, AMinuteWithoutAFaultStartsANewSeries) {
  fault_backoff b(10s);
  (void)b.on_fault(t0);
  (void)b.on_fault(t0 + 1s);
  EXPECT_EQ(b.on_fault(t0 + 2s), 200ms);
  EXPECT_EQ(b.on_fault(t0 + 62s), 0ms);
  EXPECT_EQ(b.faults_in_a_row(), 1U);
  EXPECT_EQ(b.on_fault(t0 + 63s), 100ms);
}

TEST(FaultBackoff, ZeroMostMeansNoWait) {
  fault_backoff b(0ms);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(b.on_fault(t0 + std::chrono::seconds(i)), 0ms);
  }
}

TEST(FaultBackoff, TheWaitNeverOverflowsAfterManyFaults) {
  fault_backoff b(std::chrono::minutes(10));
  ms last{};
  for (int i = 0; i < 5000; ++i) {
    last = b.on_fault(t0 + std::chrono::milliseconds(i));
  }
  EXPECT_EQ(last, std::chrono::minutes(10));
}

TEST(FaultBackoff, ResetForgivesTheSeries) {
  fault_backoff b(10s);
  (void)b.on_fault(t0);
  (void)b.on_fault(t0 + 1s);
  b.reset();
  EXPECT_EQ(b.faults_in_a_row(), 0U);
  EXPECT_EQ(b.not_before(), fault_backoff::clock::time_point{});
  EXPECT_EQ(b.on_fault(t0 + 2s), 0ms);
}

}  // namespace
}  // namespace unetback::control
