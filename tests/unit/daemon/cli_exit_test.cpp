// The unetbackd executable: bad command lines exit 2 with a message on
// stderr, before touching XenStore or any device.

#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <string>

namespace {

struct outcome {
  int status = -1;
  std::string output;
};

outcome run_daemon(const std::string& args) {
  outcome o;
  const std::string cmd = std::string(UNETBACKD_PATH) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    return o;
  }
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) {
    o.output += buf.data();
  }
  const int raw = ::pclose(p);
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return o;
}

TEST(UnetbackdCli, UnknownPlatformExitsTwoWithAMessage) {
  const outcome o = run_daemon("--config /dev/null --platform hyperv");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("--platform"), std::string::npos) << o.output;
}

TEST(UnetbackdCli, MaxQueuesOutOfRangeExitsTwo) {
  const outcome o = run_daemon("--config /dev/null --max-queues 100");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("1 to 64"), std::string::npos) << o.output;
}

TEST(UnetbackdCli, UnknownFlagExitsTwo) {
  EXPECT_EQ(run_daemon("--config /dev/null --frobnicate").status, 2);
}

TEST(UnetbackdCli, UnreadableConfigExitsTwo) {
  const outcome o = run_daemon("--config /nonexistent/unetback.toml");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.output.find("/nonexistent/unetback.toml"), std::string::npos);
}

TEST(UnetbackdCli, VersionExitsZero) {
  const outcome o = run_daemon("--version");
  EXPECT_EQ(o.status, 0);
  EXPECT_NE(o.output.find("unetbackd"), std::string::npos);
}

}  // namespace
