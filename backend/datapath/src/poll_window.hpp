#pragma once
// The adaptive busy-poll window of a queue worker (the idea of KVM's
// halt-polling). After its last work a worker may spin for window() before it
// sleeps in poll(). Waking a sleeping worker is expensive under Xen: the
// event-channel upcall or the TAP wake-up has to get a blocked dom0 vCPU
// scheduled again, which costs far more than the work itself (measured in the
// real-Xen lab: a TCP round trip is one such wake-up per queue, two when the
// data and the ACKs of a flow use different queues; docs/lab.md).
//
// The window adapts to the gaps between bursts of work:
//   * a sleep that ended with work sooner than max after the last work means a
//     longer spin would have saved that wake-up: the window grows (start, then
//     doubles, up to max);
//   * a gap longer than max means spinning only burns CPU: the window halves
//     (and reaches 0 quickly), so an idle or sparse vif costs (almost) nothing;
//   * a wake-up without work (stop, a timer) changes nothing.
// max = 0 turns it off (never spin).

#include <algorithm>
#include <chrono>

namespace unetback::datapath {

class poll_window {
 public:
  /// The first non-zero window.
  static constexpr std::chrono::microseconds start{10};

  explicit poll_window(std::chrono::microseconds max) : max_(max) {}

  /// How long to spin after the last work before sleeping.
  [[nodiscard]] std::chrono::microseconds window() const { return window_; }
  /// The most it can grow to (0: polling is off).
  [[nodiscard]] std::chrono::microseconds max() const { return max_; }

  /// A sleep ended (an event, the TAP or a timer woke the worker) `gap` after
  /// the last work, and the worker found work.
  void on_wake_with_work(std::chrono::nanoseconds gap) {
    if (max_.count() == 0) {
      return;
    }
    if (gap > max_) {
      shrink();
    } else if (gap > window_) {
      grow();
    }
  }

 private:
  void grow() { window_ = std::min(max_, window_.count() == 0 ? start : window_ * 2); }
  void shrink() { window_ = window_ < 2 * start ? std::chrono::microseconds{0} : window_ / 2; }

  std::chrono::microseconds max_;
  std::chrono::microseconds window_{0};
};

}  // namespace unetback::datapath
