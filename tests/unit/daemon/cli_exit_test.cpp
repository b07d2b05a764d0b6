// The unetbackd executable: bad command lines exit 2 with a message on
// stderr, before touching XenStore or any device; a host without /dev/net/tun
// exits 1 naming it.

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <string>

namespace {

struct outcome {
  int status = -1;
  std::string output;
};

/// Runs `cmd` through the shell; its exit status and stdout.
outcome run_command(const std::string& cmd) {
  outcome o;
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

outcome run_daemon(const std::string& args) {
  return run_command(std::string(UNETBACKD_PATH) + " " + args + " 2>&1");
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

// A dom0 without /dev/net/tun (tun not loaded, no udev): the daemon names the
// cause once at start-up instead of failing every vif with "creating TAP".
TEST(UnetbackdCli, MissingTunDeviceIsNamedAtStartUp) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root: a private mount namespace hides /dev/net/tun";
  }
  char config[] = "/tmp/unetback-cli-XXXXXX";  // an empty configuration file
  const int fd = ::mkstemp(config);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const outcome o =
      run_command("unshare --mount sh -c 'mount -t tmpfs none /dev/net && exec " +
                  std::string(UNETBACKD_PATH) + " --config " + config +
                  " --platform sim --sim-dir /nonexistent --xenstore /nonexistent/socket "
                  "--state-dir /nonexistent/state --log-target stderr' 2>&1");
  ::unlink(config);
  EXPECT_EQ(o.status, 1) << o.output;
  EXPECT_NE(o.output.find("open /dev/net/tun"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("modprobe tun"), std::string::npos) << o.output;
}

}  // namespace
