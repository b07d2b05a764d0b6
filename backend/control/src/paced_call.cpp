#include "unetback/control/paced_call.hpp"

#include <utility>

namespace unetback::control {

paced_call::paced_call(const boost::asio::any_io_executor& executor,
                       std::chrono::milliseconds interval, std::function<void()> action)
    : interval_(interval), action_(std::move(action)), deferred_(executor, [this] { run(); }) {}

void paced_call::request() {
  if (deferred_.armed()) {
    return;  // the run at the end of the interval takes this request too
  }
  const auto due = last_run_ + interval_;
  if (last_run_ == clock::time_point{} || clock::now() >= due) {
    run();
    return;
  }
  deferred_.arm_at(due);
}

void paced_call::run() {
  last_run_ = clock::now();
  action_();
}

}  // namespace unetback::control
