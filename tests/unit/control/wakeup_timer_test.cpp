// wakeup_timer: one run at the armed time, further arms absorbed until then,
// none after the object is gone.

#include "unetback/control/wakeup_timer.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <memory>

namespace unetback::control {
namespace {

using namespace std::chrono_literals;
using clock = wakeup_timer::clock;

class WakeupTimer : public ::testing::Test {
 protected:
  boost::asio::io_context io_;
  int runs_ = 0;
};

TEST_F(WakeupTimer, RunsOnceAtTheArmedTimeHoweverOftenItIsArmed) {
  wakeup_timer wake(io_.get_executor(), [this] { ++runs_; });
  const auto start = clock::now();
  wake.arm_at(start + 30ms);
  wake.arm_at(start);  // absorbed: the armed run serves it
  EXPECT_TRUE(wake.armed());
  EXPECT_EQ(runs_, 0);
  io_.run();
  EXPECT_EQ(runs_, 1);
  EXPECT_GE(clock::now() - start, 30ms);
  EXPECT_FALSE(wake.armed());
}

TEST_F(WakeupTimer, CanBeArmedAgainAfterItsRun) {
  wakeup_timer wake(io_.get_executor(), [this] { ++runs_; });
  wake.arm_at(clock::now());
  io_.run();
  io_.restart();
  wake.arm_at(clock::now());
  io_.run();
  EXPECT_EQ(runs_, 2);
}

TEST_F(WakeupTimer, DestroyingItDropsThePendingRun) {
  auto wake = std::make_unique<wakeup_timer>(io_.get_executor(), [this] { ++runs_; });
  wake->arm_at(clock::now() + 10ms);
  wake.reset();
  io_.run();
  EXPECT_EQ(runs_, 0);
}

}  // namespace
}  // namespace unetback::control
