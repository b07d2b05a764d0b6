#pragma once
// A one-shot wake-up on the control thread: arm_at(T) runs the action once at
// T; asking again while one is armed is absorbed by it (the armed run serves
// every request). Destroying the object cancels a pending run. The vif's
// retry after a fault backoff and paced_call's deferred run use it.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>

namespace unetback::control {

class wakeup_timer {
 public:
  using clock = std::chrono::steady_clock;

  /// `action` runs on `executor`'s thread.
  wakeup_timer(const boost::asio::any_io_executor& executor, std::function<void()> action);
  ~wakeup_timer() = default;
  wakeup_timer(const wakeup_timer&) = delete;
  wakeup_timer& operator=(const wakeup_timer&) = delete;

  /// Arms a run at `when` unless one is armed already.
  void arm_at(clock::time_point when);
  /// True from arm_at() until the run.
  [[nodiscard]] bool armed() const;

 private:
  struct state;
  std::shared_ptr<state> state_;  // the timer's handler holds it weakly
};

}  // namespace unetback::control
