// Debian's xenstore-utils (unmodified libxenstore via XENSTORED_PATH) talk to
// sim-xenstored and see what xs::client wrote, and vice versa.

#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "sim_fixture.hpp"
#include "unetback/xs/watcher.hpp"

namespace unetback::xs::testing {
namespace {

struct command_result {
  int status;
  std::string output;
};

command_result run(const std::string& cmd) {
  command_result res{-1, {}};
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    return res;
  }
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) {
    res.output += buf.data();
  }
  const int raw = ::pclose(p);
  res.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return res;
}

class XsCliInterop : public sim_xenstore_test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/bin/xenstore-read")) {
      GTEST_SKIP() << "xenstore-utils not installed";
    }
    sim_xenstore_test::SetUp();
  }
  std::string env() const { return "XENSTORED_PATH=" + server_->socket_path().string() + " "; }
};

TEST_F(XsCliInterop, XenstoreWriteIsVisibleToTheClient) {
  const auto res = run(env() + "xenstore-write /cli/key hello-from-cli");
  ASSERT_EQ(res.status, 0);
  client xs = dom0();
  EXPECT_EQ(xs.read("/cli/key"), "hello-from-cli");
}

TEST_F(XsCliInterop, XenstoreReadSeesWhatTheClientWrote) {
  client xs = dom0();
  xs.write("/local/domain/0/backend/vif/1/0/state", "2");
  const auto res = run(env() + "xenstore-read backend/vif/1/0/state");
  EXPECT_EQ(res.status, 0);
  EXPECT_EQ(res.output, "2\n");
}

TEST_F(XsCliInterop, XenstoreLsAndRmWork) {
  client xs = dom0();
  xs.write("/ls/a", "1");
  xs.write("/ls/b/c", "2");
  EXPECT_EQ(run(env() + "xenstore-ls -f /ls").output,
            "/ls/a = \"1\"\n/ls/b = \"\"\n/ls/b/c = \"2\"\n");
  EXPECT_EQ(run(env() + "xenstore-rm /ls/b").status, 0);
  EXPECT_EQ(xs.read("/ls/b/c"), std::nullopt);
  EXPECT_NE(run(env() + "xenstore-read /ls/b 2>/dev/null").status, 0);
}

// The "watches" control command (tests/tools/xs-control, the soak tier's
// leak check) reports each connection's live watch count, labelled with the
// client's pid.
TEST_F(XsCliInterop, ControlWatchesCountsEachConnectionsWatches) {
  client xs = dom0();
  boost::asio::io_context io;
  watcher w(xs, io.get_executor(), [](std::string_view, std::string_view) {});
  w.add("/soak/a", "a");
  w.add("/soak/b", "b");
  const std::string mine = "dom 0 pid " + std::to_string(::getpid()) + " watches ";
  const auto report = [&] {
    client other = dom0();
    std::string empty;
    char* reply = xs_control_command(other.native_handle(), "watches", empty.data(), 0);
    std::string text = reply != nullptr ? reply : "(failed)";
    std::free(reply);
    return text;
  };
  EXPECT_NE(report().find(mine + "2\n"), std::string::npos) << report();
  w.remove("/soak/a", "a");
  EXPECT_NE(report().find(mine + "1\n"), std::string::npos) << report();
}

}  // namespace
}  // namespace unetback::xs::testing
