// A program's main() through guarded_main: its own status passes through; an
// exception that escaped everything else becomes status 1 and one line on
// stderr instead of std::terminate.

#include "unetback/util/guarded_main.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace unetback::util {
namespace {

TEST(GuardedMain, TheBodysStatusPassesThrough) {
  EXPECT_EQ(guarded_main("prog", [] { return 0; }), 0);
  EXPECT_EQ(guarded_main("prog", [] { return 2; }), 2);
}

TEST(GuardedMain, AnEscapedExceptionIsStatusOneAndAMessage) {
  ::testing::internal::CaptureStderr();
  const int rc = guarded_main("prog", []() -> int { throw std::runtime_error("no socket"); });
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "prog: no socket\n");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(guarded_main("prog", []() -> int { throw 7; }), 1);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "prog: unknown error\n");
}

}  // namespace
}  // namespace unetback::util
