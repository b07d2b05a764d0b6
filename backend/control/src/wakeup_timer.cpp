#include "unetback/control/wakeup_timer.hpp"

#include <utility>

namespace unetback::control {

struct wakeup_timer::state {
  state(const boost::asio::any_io_executor& executor, std::function<void()> what)
      : timer(executor), action(std::move(what)) {}

  boost::asio::steady_timer timer;
  std::function<void()> action;
  bool armed = false;
};

wakeup_timer::wakeup_timer(const boost::asio::any_io_executor& executor,
                           std::function<void()> action)
    : state_(std::make_shared<state>(executor, std::move(action))) {}

void wakeup_timer::arm_at(clock::time_point when) {
  state& s = *state_;
  if (s.armed) {
    return;
  }
  s.armed = true;
  s.timer.expires_at(when);
  s.timer.async_wait([weak = std::weak_ptr<state>(state_)](const boost::system::error_code& ec) {
    const auto self = weak.lock();
    if (ec || !self) {
      return;
    }
    self->armed = false;
    self->action();
  });
}

bool wakeup_timer::armed() const {
  return state_->armed;
}

}  // namespace unetback::control
