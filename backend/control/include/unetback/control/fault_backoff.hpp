#pragma once
// How long a vif whose frontend keeps faulting waits before it may connect
// again. A guest can fault, re-initialise and reconnect in a loop, and every
// connection maps rings, binds ports and starts threads on the one control
// thread (docs/security.md, Policy). The first fault is free (a driver
// reloaded after a bug connects at once); each further fault within a minute
// of the previous one doubles the wait, from 100 ms up to the configured most
// (fault-backoff-max-ms; 0: no wait).

#include <algorithm>
#include <chrono>

namespace unetback::control {

class fault_backoff {
 public:
  using clock = std::chrono::steady_clock;
  /// The wait after the second fault in a row.
  static constexpr std::chrono::milliseconds first_wait{100};
  /// A fault this long after the previous one starts a new series.
  static constexpr std::chrono::seconds forgive_after{60};

  explicit fault_backoff(std::chrono::milliseconds max_wait) : max_wait_(max_wait) {}

  /// A fault at `now`: returns how long the frontend must wait before it may
  /// connect again (not_before() - now).
  std::chrono::milliseconds on_fault(clock::time_point now) {
    if (faults_in_a_row_ > 0 && now - last_fault_ >= forgive_after) {
      faults_in_a_row_ = 0;
    }
    last_fault_ = now;
    faults_in_a_row_ = std::min(faults_in_a_row_ + 1, max_counted);
    std::chrono::milliseconds wait{0};
    if (faults_in_a_row_ > 1) {
      const unsigned doublings = std::min(faults_in_a_row_ - 2, max_doublings);
      wait = std::min(first_wait * (1U << doublings), max_wait_);
    }
    not_before_ = now + wait;
    return wait;
  }

  /// The earliest time the frontend may connect again.
  [[nodiscard]] clock::time_point not_before() const { return not_before_; }
  /// Faults in the current series (each within forgive_after of the last).
  [[nodiscard]] unsigned faults_in_a_row() const { return faults_in_a_row_; }
  /// The operator trusts the frontend again (unetbackctl enable).
  void reset() {
    faults_in_a_row_ = 0;
    not_before_ = {};
  }

 private:
  static constexpr unsigned max_doublings = 16;  // 100 ms << 16: over 100 minutes
  static constexpr unsigned max_counted = 1000;

  std::chrono::milliseconds max_wait_;
  unsigned faults_in_a_row_ = 0;
  clock::time_point last_fault_{};
  clock::time_point not_before_{};
};

}  // namespace unetback::control
