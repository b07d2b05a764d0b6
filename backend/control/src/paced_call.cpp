#include "unetback/control/paced_call.hpp"

#include <utility>

namespace unetback::control {

using clock = std::chrono::steady_clock;

struct paced_call::state {
  state(const boost::asio::any_io_executor& executor, std::chrono::milliseconds every,
        std::function<void()> what)
      : timer(executor), interval(every), action(std::move(what)) {}

  void run() {
    last_run = clock::now();
    action();
  }

  boost::asio::steady_timer timer;
  std::chrono::milliseconds interval;
  std::function<void()> action;
  clock::time_point last_run{};
  bool armed = false;
};

paced_call::paced_call(const boost::asio::any_io_executor& executor,
                       std::chrono::milliseconds interval, std::function<void()> action)
    : state_(std::make_shared<state>(executor, interval, std::move(action))) {}

void paced_call::request() {
  state& s = *state_;
  if (s.armed) {
    return;  // the run at the end of the interval takes this request too
  }
  const auto due = s.last_run + s.interval;
  if (s.last_run == clock::time_point{} || clock::now() >= due) {
    s.run();
    return;
  }
  s.armed = true;
  s.timer.expires_at(due);
  s.timer.async_wait([weak = std::weak_ptr<state>(state_)](const boost::system::error_code& ec) {
    const auto self = weak.lock();
    if (ec || !self) {
      return;
    }
    self->armed = false;
    self->run();
  });
}

}  // namespace unetback::control
