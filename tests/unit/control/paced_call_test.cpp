// paced_call: at most one run per interval, the last request always honoured.

#include "unetback/control/paced_call.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <thread>

namespace unetback::control {
namespace {

using namespace std::chrono_literals;

class PacedCall : public ::testing::Test {
 protected:
  boost::asio::io_context io_;
  int runs_ = 0;
};

TEST_F(PacedCall, TheFirstRequestRunsAtOnce) {
  paced_call call(io_.get_executor(), 50ms, [this] { ++runs_; });
  call.request();
  EXPECT_EQ(runs_, 1);
}

TEST_F(PacedCall, RequestsWithinTheIntervalCoalesceIntoOneRunAtItsEnd) {
  paced_call call(io_.get_executor(), 50ms, [this] { ++runs_; });
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    call.request();
  }
  EXPECT_EQ(runs_, 1);
  io_.run();  // the one pending run
  EXPECT_EQ(runs_, 2);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
}

TEST_F(PacedCall, ARequestAfterTheIntervalRunsAtOnce) {
  paced_call call(io_.get_executor(), 10ms, [this] { ++runs_; });
  call.request();
  std::this_thread::sleep_for(15ms);
  call.request();
  EXPECT_EQ(runs_, 2);
}

TEST_F(PacedCall, APendingRunIsDroppedWithTheCall) {
  {
    paced_call call(io_.get_executor(), 10ms, [this] { ++runs_; });
    call.request();
    call.request();
  }
  io_.run();
  EXPECT_EQ(runs_, 1);
}

}  // namespace
}  // namespace unetback::control
