// The busy-polling a guest can buy. A guest that sends one small packet just
// inside a worker's poll window, again and again, turns every spin into a
// hit; with a bare percentage budget that kept half a dom0 CPU spinning per
// queue (a whole one before there was a budget). Spinning must now pay for
// itself in the wake-ups it saves (spin_budget.hpp).
//
// The daemon runs with a fixed 500 us window (--poll-us 500, as an operator
// may set it; auto is tens of us on this host), and the guest sends one
// 60-byte packet every 400 us for 3 s. The queue may spin at most 5 % of
// that time (its poll_us counter: microseconds spent spinning).

#include <chrono>
#include <iostream>
#include <thread>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

using namespace std::chrono_literals;

class BusyPoll : public hostile_test {
 protected:
  world_options world_config() override { return {{"--poll-us", "500"}}; }
};

TEST_F(BusyPoll, APacketJustInsideTheWindowBuysAtMostFivePercentOfACpu) {
  tx_driver& t = connect_and_drive();
  begin_attack();
  const auto spun_before = counter("poll_us");
  const auto packets_before = counter("tx_packets");
  const auto start = std::chrono::steady_clock::now();
  auto next = start;
  std::size_t outstanding = 0;
  std::size_t answered_okay = 0;
  const auto collect = [&](std::size_t n, std::chrono::milliseconds timeout) {
    for (const auto& r : t.responses(n, timeout)) {
      answered_okay += r.status == rings::netif_rsp::okay ? 1 : 0;
      --outstanding;
    }
  };
  while (std::chrono::steady_clock::now() - start < 3s) {
    next += 400us;
    t.send_valid();
    ++outstanding;
    if (outstanding > 64) {  // answered long ago: take them without waiting on each
      collect(outstanding - 32, state_timeout);
    }
    std::this_thread::sleep_until(next);
  }
  collect(outstanding, state_timeout);
  EXPECT_EQ(outstanding, 0U);
  const auto elapsed_us =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::steady_clock::now() - start)
                                     .count());
  const auto spun_us = counter("poll_us") - spun_before;
  const auto packets = counter("tx_packets") - packets_before;
  std::cerr << "[busy-poll] " << packets << " packets in " << elapsed_us / 1000
            << " ms; the queue spun " << spun_us / 1000 << " ms (" << spun_us * 100 / elapsed_us
            << " %), poll_hits " << counter("poll_hits") << ", poll_refused_budget "
            << counter("poll_refused_budget") << "\n";
  EXPECT_GT(packets, 5000U);  // about one per 400 us
  EXPECT_EQ(answered_okay, packets);
  EXPECT_GT(spun_us, 0U) << "the worker never spun: the scenario tested nothing";
  EXPECT_LE(spun_us, elapsed_us * 5 / 100);
  expect_vif_connected();
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
