// What bounds a worker's busy-polling besides its adaptive window: the spin
// budget (spin_budget.hpp: at most pct of every 10 ms, whatever the guest's
// timing) and the steal meter (steal_meter.hpp: no spinning while the
// hypervisor runs other vCPUs instead of ours).

#include <gtest/gtest.h>

#include <chrono>

#include "spin_budget.hpp"
#include "steal_meter.hpp"
#include "wake_cost.hpp"

namespace unetback::datapath {
namespace {

using namespace std::chrono_literals;
using time_point = std::chrono::steady_clock::time_point;

TEST(SpinBudget, AllowsUpToItsShareOfAPeriodThenRefusesUntilTheNext) {
  spin_budget b(25);  // 2.5 ms of every 10 ms
  const time_point t0{100s};
  EXPECT_TRUE(b.allows(t0));
  b.charge(t0 + 1ms, 2ms);
  EXPECT_TRUE(b.allows(t0 + 2ms));
  b.charge(t0 + 3ms, 600us);
  EXPECT_FALSE(b.allows(t0 + 4ms));  // 2.6 ms spent
  EXPECT_FALSE(b.allows(t0 + 9ms));
  EXPECT_TRUE(b.allows(t0 + 10ms));  // a new period
}

TEST(SpinBudget, ZeroNeverAllowsAndHundredAlways) {
  spin_budget none(0);
  spin_budget all(100);
  const time_point t0{100s};
  EXPECT_FALSE(none.allows(t0));
  all.charge(t0, 9ms);
  EXPECT_TRUE(all.allows(t0 + 1ms));
  all.charge(t0 + 1ms, 1ms);
  EXPECT_FALSE(all.allows(t0 + 2ms));  // the whole period was spent
}

TEST(StealMeter, ParsesTheCpuLineOfProcStat) {
  const auto t = parse_cpu_line("cpu  10 2 30 400 5 6 7 80 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->busy, 10U + 2 + 30 + 6 + 7);
  EXPECT_EQ(t->idle, 405U);
  EXPECT_EQ(t->steal, 80U);
}

TEST(StealMeter, AcceptsAnOldKernelsShortLineAndRefusesOtherText) {
  const auto t = parse_cpu_line("cpu  10 2 30 400\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->steal, 0U);
  EXPECT_FALSE(parse_cpu_line("cpu0 1 2 3 4 5 6 7 8").has_value());
  EXPECT_FALSE(parse_cpu_line("cpu  1 2").has_value());
  EXPECT_FALSE(parse_cpu_line("").has_value());
}

TEST(StealMeter, StealAboveTheThresholdIsContention) {
  const cpu_times a{1000, 1000, 0};
  // 100 ticks: 60 busy, 30 idle, 10 stolen = 10 %.
  const cpu_times b{1060, 1030, 10};
  EXPECT_TRUE(steal_meter::over(a, b, 5));
  EXPECT_FALSE(steal_meter::over(a, b, 10));
  EXPECT_FALSE(steal_meter::over(a, a, 5));  // no time passed
  EXPECT_FALSE(steal_meter::over(b, a, 5));  // counters went back: no verdict
}

TEST(StealMeter, OffAtOneHundredPercent) {
  steal_meter m(100);
  EXPECT_FALSE(m.contended(std::chrono::steady_clock::now()));
}

}  // namespace
}  // namespace unetback::datapath

namespace unetback::datapath {
namespace {

TEST(WakeCost, AutoWindowIsAFewWakeUpsWithinItsBounds) {
  using std::chrono::microseconds;
  EXPECT_EQ(auto_poll_window(microseconds{100}), microseconds{100 * wake_cost_multiple});
  EXPECT_EQ(auto_poll_window(microseconds{1}), auto_poll_min);     // hardware at its best
  EXPECT_EQ(auto_poll_window(microseconds{5000}), auto_poll_max);  // a starved emulator
}

TEST(WakeCost, MeasuredOnceAndPlausible) {
  const auto first = wake_cost();
  EXPECT_GE(first.count(), 1);
  EXPECT_LT(first, std::chrono::seconds{1});
  EXPECT_EQ(wake_cost(), first);  // measured at the first call only
}

}  // namespace
}  // namespace unetback::datapath
