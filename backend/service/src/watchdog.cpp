#include "unetback/service/watchdog.hpp"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <cstdint>

#include "unetback/util/rate_limit.hpp"

namespace unetback::service {

namespace {

std::chrono::microseconds ping_interval() {
  std::uint64_t timeout_us = 0;
  // > 0: enabled for this PID (WATCHDOG_PID matches or is unset), timeout in usec.
  if (sd_watchdog_enabled(0, &timeout_us) <= 0 || timeout_us == 0) {
    return std::chrono::microseconds{0};
  }
  // systemd recommends pinging at half the timeout (sd_watchdog_enabled(3)).
  const auto half = static_cast<std::chrono::microseconds::rep>(timeout_us / 2);
  return std::chrono::microseconds{half > 0 ? half : 1};
}

}  // namespace

watchdog::watchdog(boost::asio::io_context& io, health_check healthy)
    : timer_(io), healthy_(std::move(healthy)), interval_(ping_interval()) {}

watchdog::~watchdog() {
  try {
    stop();
  } catch (...) {
    // cancel() fails only if the OS refuses; at destruction nothing is left to do
  }
}

void watchdog::start() {
  if (!enabled() || running_) {
    return;
  }
  running_ = true;
  spdlog::debug("systemd watchdog: pinging every {} ms", interval_.count() / 1000);
  tick();
}

void watchdog::stop() {
  running_ = false;
  timer_.cancel();
}

void watchdog::schedule() {
  timer_.expires_after(interval_);
  // The handler touches `this` only when not cancelled: stop() (and so the
  // destructor) cancels the timer before the object goes away.
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec && running_) {
      tick();
    }
  });
}

void watchdog::tick() {
  if (!healthy_ || healthy_()) {
    sd_notify(0, "WATCHDOG=1");
  } else {
    UNETBACK_LOG_RATELIMITED(spdlog::level::warn,
                             "health check failed: withholding the systemd watchdog ping");
  }
  schedule();
}

}  // namespace unetback::service
