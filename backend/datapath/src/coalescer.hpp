#pragma once
// Interrupt moderation for a queue worker that does not busy-poll (polling
// off, or refused because dom0's vCPUs are overcommitted, steal_meter.hpp, or
// the spin budget is spent). A worker that sleeps on its fds is woken for
// every guest kick and every frame the host writes into the TAP: each wake-up
// costs a dom0 vCPU schedule, and each sweep then moves a packet or two while
// holding the CPU the guest needs to produce more (the lab measured two queues
// carrying less than one this way, docs/performance.md, "TCG single"). Coalescing answers what a
// NIC's interrupt moderation does: while work keeps arriving sooner than `interval` after the last,
// the worker sleeps `interval` on a timer with the rings' event thresholds left unarmed (the guest
// does not kick meanwhile) and sweeps what gathered.
//
//   * work that followed the previous work by less than interval, twice in a
//     row, starts it (one short gap is a request and its reply: a ping-pong
//     would pay the interval for nothing);
//   * a timed sleep after which the sweep found nothing ends it;
//   * interval 0 turns it off.
// What a guest can make of it: at most one timer wake-up per interval.

#include <chrono>
#include <cstdint>

namespace unetback::datapath {

class coalescer {
 public:
  /// Short gaps in a row that start coalescing.
  static constexpr std::uint32_t streak_to_start = 2;

  explicit coalescer(std::chrono::microseconds interval) : interval_(interval) {}

  /// How long a coalescing sleep lasts (0: coalescing is off).
  [[nodiscard]] std::chrono::microseconds interval() const { return interval_; }

  /// A sweep that did not follow a coalescing sleep found work `gap` after
  /// the previous work.
  void on_work(std::chrono::nanoseconds gap) {
    if (gap < interval_) {
      streak_ = streak_ < streak_to_start ? streak_ + 1 : streak_;
    } else {
      streak_ = 0;
    }
  }

  /// The sweep after a coalescing sleep found work, or nothing.
  void after_sleep(bool found_work) {
    if (!found_work) {
      streak_ = 0;
    }
  }

  /// Whether the next sleep should be a coalescing one.
  [[nodiscard]] bool wanted() const { return interval_.count() > 0 && streak_ >= streak_to_start; }

 private:
  std::chrono::microseconds interval_;
  std::uint32_t streak_ = 0;
};

}  // namespace unetback::datapath
