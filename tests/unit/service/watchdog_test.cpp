// The systemd watchdog driver: pings at half of WatchdogSec from the io_context,
// withholds pings while unhealthy, and stays idle outside systemd.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <cstdlib>
#include <string>

#include "test_support.hpp"
#include "unetback/service/watchdog.hpp"

namespace unetback::service {
namespace {

using namespace std::chrono_literals;

// WATCHDOG_USEC / WATCHDOG_PID as systemd sets them for the main process.
class watchdog_env {
 public:
  explicit watchdog_env(std::chrono::microseconds timeout, pid_t pid = ::getpid()) {
    ::setenv("WATCHDOG_USEC", std::to_string(timeout.count()).c_str(), 1);
    ::setenv("WATCHDOG_PID", std::to_string(pid).c_str(), 1);
  }
  ~watchdog_env() {
    ::unsetenv("WATCHDOG_USEC");
    ::unsetenv("WATCHDOG_PID");
  }
  watchdog_env(const watchdog_env&) = delete;
  watchdog_env& operator=(const watchdog_env&) = delete;
};

int count_pings(test::fake_notify_socket& systemd) {
  int pings = 0;
  while (auto msg = systemd.receive(0ms)) {
    EXPECT_EQ(*msg, "WATCHDOG=1");
    ++pings;
  }
  return pings;
}

TEST(Watchdog, PingsAtHalfTheIntervalSystemdAskedFor) {
  test::fake_notify_socket systemd;
  watchdog_env env(100ms);
  boost::asio::io_context io;
  watchdog dog(io);
  ASSERT_TRUE(dog.enabled());
  EXPECT_EQ(dog.interval(), 50ms);
  dog.start();
  io.run_for(230ms);  // pings at 0, 50, 100, 150, 200 ms
  const int pings = count_pings(systemd);
  EXPECT_GE(pings, 3);
  EXPECT_LE(pings, 6);
}

TEST(Watchdog, UnhealthyDaemonWithholdsPingsSoSystemdRestartsIt) {
  test::fake_notify_socket systemd;
  watchdog_env env(40ms);
  boost::asio::io_context io;
  bool healthy = true;
  int checks = 0;
  watchdog dog(io, [&] {
    ++checks;
    return healthy;
  });
  dog.start();
  io.run_for(50ms);
  EXPECT_GE(count_pings(systemd), 1);
  healthy = false;
  const int checks_before = checks;
  io.run_for(100ms);
  EXPECT_EQ(count_pings(systemd), 0);
  EXPECT_GT(checks, checks_before);  // still checking: pings resume once healthy
  healthy = true;
  io.run_for(60ms);
  EXPECT_GE(count_pings(systemd), 1);
}

TEST(Watchdog, StopEndsThePingsAndLeavesNoWorkBehind) {
  test::fake_notify_socket systemd;
  watchdog_env env(40ms);
  boost::asio::io_context io;
  watchdog dog(io);
  dog.start();
  io.run_for(30ms);
  dog.stop();
  io.restart();
  io.run();  // returns once the cancelled wait completed: nothing left pending
  count_pings(systemd);
  io.restart();
  io.run_for(60ms);
  EXPECT_EQ(count_pings(systemd), 0);
}

TEST(Watchdog, OutsideSystemdItIsDisabledAndSchedulesNothing) {
  ::unsetenv("WATCHDOG_USEC");
  ::unsetenv("WATCHDOG_PID");
  boost::asio::io_context io;
  watchdog dog(io);
  EXPECT_FALSE(dog.enabled());
  dog.start();
  EXPECT_EQ(io.run(), 0U);  // no handler ever ran
}

TEST(Watchdog, WatchdogMeantForAnotherProcessIsIgnored) {
  // WATCHDOG_PID names the main process; a child that inherited it must not ping.
  test::fake_notify_socket systemd;
  watchdog_env env(100ms, ::getpid() + 1);
  boost::asio::io_context io;
  watchdog dog(io);
  EXPECT_FALSE(dog.enabled());
  dog.start();
  io.run_for(60ms);
  EXPECT_EQ(count_pings(systemd), 0);
}

}  // namespace
}  // namespace unetback::service
