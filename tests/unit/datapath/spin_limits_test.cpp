// What bounds a worker's busy-polling besides its adaptive window: the spin
// budget (spin_budget.hpp: spinning paid by the wake-ups its hits save, at
// most pct of every 10 ms, whatever the guest's timing) and the steal meter (steal_meter.hpp: no
// spinning while the hypervisor runs other vCPUs instead of ours).

#include <gtest/gtest.h>

#include <chrono>

#include "spin_budget.hpp"
#include "steal_meter.hpp"
#include "wake_cost.hpp"

namespace unetback::datapath {
namespace {

using namespace std::chrono_literals;
using time_point = std::chrono::steady_clock::time_point;

TEST(SpinBudget, WithoutHitsOnlyTheBaseAllowance) {
  spin_budget b(50, 20us);
  const time_point t0{100s};
  EXPECT_TRUE(b.allows(t0));
  b.charge(t0 + 50us, 50us);
  EXPECT_TRUE(b.allows(t0 + 50us));
  b.charge(t0 + 100us, 50us);  // the 100 us base is spent
  EXPECT_FALSE(b.allows(t0 + 100us));
  EXPECT_FALSE(b.allows(t0 + 9ms));
  EXPECT_TRUE(b.allows(t0 + 10ms));  // a new period
}

TEST(SpinBudget, EachHitEarnsTwoWakeUps) {
  spin_budget b(50, 20us);
  const time_point t0{100s};
  b.charge(t0 + 100us, 100us);
  EXPECT_FALSE(b.allows(t0 + 100us));
  b.on_hit(t0 + 100us);  // +40 us
  EXPECT_TRUE(b.allows(t0 + 100us));
  b.charge(t0 + 140us, 40us);
  EXPECT_FALSE(b.allows(t0 + 140us));
}

TEST(SpinBudget, HitsNeverBuyMoreThanTheShareOfAPeriod) {
  spin_budget b(25, 1ms);  // at most 2.5 ms of every 10 ms
  const time_point t0{100s};
  for (int i = 0; i < 10; ++i) {
    b.on_hit(t0);  // 20 ms earned
  }
  b.charge(t0 + 1ms, 2ms);
  EXPECT_TRUE(b.allows(t0 + 2ms));
  b.charge(t0 + 3ms, 600us);
  EXPECT_FALSE(b.allows(t0 + 4ms));  // 2.6 ms spent
  EXPECT_TRUE(b.allows(t0 + 10ms));  // a new period, and what was earned is gone
  b.charge(t0 + 10ms + 100us, 100us);
  EXPECT_FALSE(b.allows(t0 + 10ms + 100us));
}

// The hostile timing: one packet just inside the window, so every spin that
// lasts is a hit that costs the whole gap. Simulated as the worker spins: 10
// us looks, each charged after it ran; a packet every 400 us; a 500 us window,
// so a wake-up counts 62.5 us. The bound: base / (1 - 2W / gap) = 100 us /
// 0.69 per 10 ms, 1.5 %.
TEST(SpinBudget, APacketJustInsideTheWindowBuysLittleSpinning) {
  spin_budget b(50, 62500ns);
  const time_point t0{100s};
  std::chrono::nanoseconds spun{0};
  time_point t = t0;
  for (time_point packet = t0 + 400us; packet < t0 + 1s; packet += 400us) {
    bool spinning = false;
    while (t < packet && b.allows(t)) {  // spin until the packet or the budget says no
      b.charge(t + 10us, 10us);
      spun += 10us;
      t += 10us;
      spinning = true;
    }
    if (spinning && t >= packet) {
      b.on_hit(t);
    }
    t = packet;  // slept until it, or spun up to it
  }
  EXPECT_LE(spun, 17ms);  // 1.5 % of the second, and a look's overrun
  EXPECT_GE(spun, 10ms);  // the base allowance of each period was used
}

TEST(SpinBudget, ZeroNeverAllowsAndHundredAlways) {
  spin_budget none(0, 20us);
  spin_budget all(100, 20us);
  const time_point t0{100s};
  EXPECT_FALSE(none.allows(t0));
  none.on_hit(t0);
  EXPECT_FALSE(none.allows(t0));
  all.charge(t0, 10ms);
  EXPECT_TRUE(all.allows(t0 + 1ms));  // no bound, and spinning need not pay
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
