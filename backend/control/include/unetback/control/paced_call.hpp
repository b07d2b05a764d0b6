#pragma once
// An action on the control thread that runs at most once per interval, however
// often it is asked for: the first request runs at once, requests within the
// interval coalesce into one run at its end, so the last one is always
// honoured. A guest changing its hash configuration thousands of times per
// second costs the control plane (a file write, a BPF map update) ten times
// per second (docs/security.md, checklist).

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <functional>

#include "unetback/control/wakeup_timer.hpp"

namespace unetback::control {

class paced_call {
 public:
  /// `action` runs on `executor`'s thread, from request() or a timer.
  paced_call(const boost::asio::any_io_executor& executor, std::chrono::milliseconds interval,
             std::function<void()> action);
  /// A pending run is dropped.
  ~paced_call() = default;
  paced_call(const paced_call&) = delete;
  paced_call& operator=(const paced_call&) = delete;

  /// On the executor's thread: runs the action now if the last run was at
  /// least the interval ago, else once when it will be.
  void request();

 private:
  using clock = wakeup_timer::clock;
  void run();

  std::chrono::milliseconds interval_;
  std::function<void()> action_;
  clock::time_point last_run_{};
  wakeup_timer deferred_;  // last: its run calls run()
};

}  // namespace unetback::control
