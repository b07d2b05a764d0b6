// The supervisor's side of a lost XenStore connection (xenstored restarted
// or crashed). libxenstore closes a connection whose socket failed but tells
// nobody (the watch pipe stays silent), so a probe reads our `domid` key once
// a second, on the client's request connection (the watches have their own:
// xs::client). On loss: log it, drop the watcher (its watches died with the
// connection), and reconnect with exponential backoff (100 ms .. 5 s). Once
// connected: re-establish the backend/vif watch (its initial event rescans
// for new devices) and every vif's frontend watches, and re-read every vif.
// A vif whose backend directory is gone (a restarted xenstored starts empty)
// is destroyed like an unplugged one: queues stopped, TAP removed, forgotten.
// The data paths keep running meanwhile: they never touch XenStore.

#include <spdlog/spdlog.h>

#include <algorithm>

#include "unetback/control/supervisor.hpp"

namespace unetback::control {

namespace {

constexpr std::chrono::milliseconds probe_interval{1000};
constexpr std::chrono::milliseconds first_retry{100};
constexpr std::chrono::milliseconds max_retry{5000};

}  // namespace

void supervisor::start_liveness_probe() {
  xs_timer_ = std::make_unique<boost::asio::steady_timer>(executor_);
  arm_xs_timer(probe_interval);
}

void supervisor::arm_xs_timer(std::chrono::milliseconds delay) {
  xs_timer_->expires_after(delay);
  xs_timer_->async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (!ec && *alive && !stopped_) {
      on_xs_timer();
    }
  });
}

void supervisor::on_xs_timer() {
  if (reconnect_delay_.count() == 0) {
    if (!xs_.alive()) {
      on_xenstore_lost();
      return;
    }
    arm_xs_timer(probe_interval);
    return;
  }
  if (try_reconnect()) {
    arm_xs_timer(probe_interval);
    return;
  }
  reconnect_delay_ = std::min(reconnect_delay_ * 2, max_retry);
  arm_xs_timer(reconnect_delay_);
}

void supervisor::on_xenstore_lost() {
  spdlog::error(
      "supervisor: XenStore connection lost (xenstored gone?): {} vifs keep their data "
      "paths; reconnecting with backoff",
      vifs_.size());
  watcher_.reset();  // its watches died with the connection
  reconnect_delay_ = first_retry;
  reconnect_attempts_ = 0;
  arm_xs_timer(reconnect_delay_);
}

bool supervisor::try_reconnect() {
  ++reconnect_attempts_;
  try {
    xs_.reconnect();
    if (!xs_.alive()) {
      return false;
    }
    rewatch();
  } catch (const std::exception& e) {
    if (reconnect_attempts_ == 1 || reconnect_attempts_ % 10 == 0) {
      spdlog::warn("supervisor: XenStore reconnect attempt {} failed: {}", reconnect_attempts_,
                   e.what());
    }
    watcher_.reset();
    return false;
  }
  spdlog::info("supervisor: XenStore reconnected after {} attempts; watching {} again",
               reconnect_attempts_, env_->backend_root);
  reconnect_delay_ = std::chrono::milliseconds{0};
  return true;
}

// Everything a fresh connection needs: the watches, then a re-read of every
// vif (coalesced through mark_dirty) and a rescan (the initial watch event).
void supervisor::rewatch() {
  watcher_ = std::make_unique<xs::watcher>(
      xs_, executor_, [this](std::string_view p, std::string_view t) { on_watch(p, t); });
  watcher_->add(env_->backend_root, backend_token);
  for (const auto& [key, v] : vifs_) {
    for (const std::string& path : v->frontend_watch_paths()) {
      watcher_->add(path, frontend_token(key));
    }
  }
  for (const auto& [key, v] : vifs_) {
    mark_dirty(key);
  }
}

}  // namespace unetback::control
