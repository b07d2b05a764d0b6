// The state directory: created when missing, one daemon at a time.

#include "unetback/service/state_directory.hpp"
#include "unetback/test_support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <string>

namespace unetback::service {
namespace {

class StateDirectory : public ::testing::Test {
 protected:
  test_support::temp_dir tmp_{"unetback-state-test-"};
  std::string parent_ = tmp_.path().string();
};

TEST_F(StateDirectory, IsCreatedPrivateWhenMissing) {
  const state_directory d(parent_ + "/state");
  struct stat st {};
  ASSERT_EQ(::stat((parent_ + "/state").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700U);
}

TEST_F(StateDirectory, ASecondDaemonIsRefusedUntilTheFirstIsGone) {
  auto first = std::make_unique<state_directory>(parent_ + "/state");
  try {
    const state_directory second(parent_ + "/state");
    FAIL() << "two holders of one state directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("in use by another unetbackd"), std::string::npos)
        << e.what();
  }
  first.reset();
  EXPECT_NO_THROW(state_directory again(parent_ + "/state"));
}

// Others could replace the files a restarted daemon reads back into guests'
// rings: such a directory is refused, naming why.
TEST_F(StateDirectory, ADirectoryOthersMayWriteIsRefused) {
  const std::string dir = parent_ + "/state";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  try {
    const state_directory d(dir);
    FAIL() << "a world-writable state directory was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("group or others may write"), std::string::npos)
        << e.what();
  }
}

TEST_F(StateDirectory, ASymbolicLinkToADirectoryIsRefused) {
  const std::string real = parent_ + "/real";
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(real.c_str(), (parent_ + "/state").c_str()), 0);
  EXPECT_THROW(state_directory d(parent_ + "/state"), std::runtime_error);
}

TEST_F(StateDirectory, AFileInItsPlaceIsAnError) {
  std::ofstream(parent_ + "/file") << "x";
  EXPECT_THROW(state_directory d(parent_ + "/file"), std::runtime_error);
}

}  // namespace
}  // namespace unetback::service
