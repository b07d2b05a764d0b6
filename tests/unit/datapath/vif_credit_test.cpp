// The vif's `rate` credit: continuous accrual capped at the burst, shared by
// the vif's queues (one credit however many workers charge it).

#include "unetback/datapath/vif_credit.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace unetback::datapath {
namespace {

using namespace std::chrono_literals;
using clock = vif_credit::clock;

TEST(VifCredit, WithoutARateEverythingPasses) {
  vif_credit c;
  EXPECT_FALSE(c.limited());
  EXPECT_TRUE(c.consume(65535, clock::now()));
  c.set_rate(0, 20ms);
  EXPECT_TRUE(c.consume(65535, clock::now()));
}

TEST(VifCredit, StartsWithABurstOfAtLeast128KiB) {
  vif_credit c;
  const auto t0 = clock::now();
  c.set_rate(1000, 10ms, t0);  // 100 kB/s, burst 128 KiB
  EXPECT_TRUE(c.consume(65536, t0));
  EXPECT_TRUE(c.consume(65536, t0));
  EXPECT_FALSE(c.consume(1, t0));
}

// The packet that waits is charged as soon as its own bytes accrued, not at
// the next whole interval (what lets one TCP stream use the whole rate).
TEST(VifCredit, CreditAccruesContinuouslyAndReadyAtSaysWhen) {
  vif_credit c;
  const auto t0 = clock::now();
  c.set_rate(200'000, 100ms, t0);  // 2 MB/s, burst 200 kB
  ASSERT_TRUE(c.consume(200'000, t0));
  EXPECT_FALSE(c.consume(20'000, t0 + 5ms));  // 10 kB accrued
  EXPECT_EQ(c.ready_at(20'000, t0 + 5ms), t0 + 10ms);
  EXPECT_TRUE(c.consume(20'000, t0 + 10ms));
  EXPECT_FALSE(c.consume(1'000, t0 + 10ms));
}

TEST(VifCredit, IdleTimeIsCappedAtTheBurst) {
  vif_credit c;
  const auto t0 = clock::now();
  c.set_rate(150'000, 10ms, t0);
  ASSERT_TRUE(c.consume(150'000, t0));
  EXPECT_TRUE(c.consume(150'000, t0 + 10s));  // ten seconds idle: still one burst
  EXPECT_FALSE(c.consume(1'000, t0 + 10s));
}

TEST(VifCredit, ReadyAtIsAtLeastAMillisecondAway) {
  vif_credit c;
  const auto t0 = clock::now();
  c.set_rate(1'000'000'000, 1ms, t0);
  ASSERT_TRUE(c.consume(1'000'000'000, t0));
  EXPECT_EQ(c.ready_at(1, t0), t0 + 1ms);
}

// Four workers charging one credit as fast as they can: together they get
// the rate, not four times it. They run until the credit has refilled for
// 0.1 s beyond its burst (a time-based lower bound fails on a loaded host,
// where the workers may get little CPU), then the total must be within burst
// plus rate times the time they ran.
TEST(VifCredit, QueuesShareOneCredit) {
  vif_credit c;
  constexpr std::uint64_t burst = 131'072;  // 12.5 MiB/s: burst 128 KiB per 10 ms
  constexpr std::uint64_t refilled = burst + burst * 10;
  const auto t0 = clock::now();
  c.set_rate(burst, 10ms, t0);
  std::atomic<std::uint64_t> passed{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&] {
      const auto deadline = clock::now() + 10s;
      while (passed.load() < refilled && clock::now() < deadline) {
        if (c.consume(1500, clock::now())) {
          passed.fetch_add(1500);
        }
      }
    });
  }
  for (auto& w : workers) {
    w.join();
  }
  const double seconds = std::chrono::duration<double>(clock::now() - t0).count();
  const double allowed = static_cast<double>(burst) * (1 + seconds * 100);  // burst + rate x time
  EXPECT_GE(passed.load(), refilled);  // the credit refilled: it is not stuck
  EXPECT_LE(static_cast<double>(passed.load()), allowed);
  EXPECT_GE(seconds, 0.09);  // 10 refills of 10 ms cannot come sooner
}

}  // namespace
}  // namespace unetback::datapath
