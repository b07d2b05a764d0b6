#pragma once
// systemd's service watchdog (WatchdogSec= in unetbackd.service) driven from the
// daemon's Boost.Asio io_context: a steady_timer sends "WATCHDOG=1" at half the
// interval systemd asked for. The ping runs on the control-plane thread, so a hung
// event loop (a blocked XenStore call, a deadlock) stops the pings and systemd
// restarts the daemon (Restart=on-failure). An optional health check lets the daemon
// withhold the ping for other stalls it can detect (e.g. a queue worker stuck).

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>

namespace unetback::service {

class watchdog {
 public:
  /// Returns true while the daemon is healthy; false withholds that ping.
  using health_check = std::function<bool()>;

  /// Reads the watchdog settings systemd passed (WATCHDOG_USEC, WATCHDOG_PID; see
  /// sd_watchdog_enabled(3)). Without them the watchdog is disabled and start()
  /// does nothing.
  explicit watchdog(boost::asio::io_context& io, health_check healthy = {});
  ~watchdog();
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

  /// True when systemd expects keep-alive pings from this process.
  [[nodiscard]] bool enabled() const { return interval_.count() > 0; }
  /// Time between pings: half of systemd's WatchdogSec (zero when disabled).
  [[nodiscard]] std::chrono::microseconds interval() const { return interval_; }

  /// Pings once now, then every interval(), on the io_context's thread.
  void start();
  /// Stops pinging (call before a long, deliberate shutdown; systemd's stop
  /// timeout, not the watchdog, bounds it from then on).
  void stop();

 private:
  void schedule();
  void tick();

  boost::asio::steady_timer timer_;
  health_check healthy_;
  std::chrono::microseconds interval_{0};
  bool running_ = false;
};

}  // namespace unetback::service
