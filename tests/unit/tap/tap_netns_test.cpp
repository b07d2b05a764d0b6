// A TAP created inside a named network namespace (netfront-sim's guest side).

#include <gtest/gtest.h>
#include <net/if.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "tap_test_util.hpp"
#include "unetback/tap/netns.hpp"
#include "unetback/tap/tap_device.hpp"

namespace unetback::tap {
namespace {

class TapNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::can_create_taps() || std::system("ip -V >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "needs root, /dev/net/tun and iproute2 (test setup only)";
    }
    ns_ = "unetback-test-" + std::to_string(::getpid());
    ASSERT_EQ(std::system(("ip netns add " + ns_).c_str()), 0);
  }
  void TearDown() override {
    if (!ns_.empty()) {
      (void)std::system(("ip netns del " + ns_).c_str());
    }
  }
  std::string ns_;
};

TEST_F(TapNetns, TapLivesInTheNamespaceAndTheThreadComesBack) {
  const std::string name = testing::unique_name("ubn");
  const auto before = std::filesystem::read_symlink("/proc/thread-self/ns/net");
  tap_device dev = tap_device::create_in_netns(ns_, {name, 0, false});
  EXPECT_EQ(std::filesystem::read_symlink("/proc/thread-self/ns/net"), before);
  EXPECT_EQ(if_nametoindex(name.c_str()), 0U);  // not in our namespace
  const std::string show = "ip -n " + ns_ + " link show " + name + " >/dev/null 2>&1";
  EXPECT_EQ(std::system(show.c_str()), 0);
  dev.set_mtu(1400);
  dev.set_up(true);
  EXPECT_TRUE(dev.is_up());
  EXPECT_EQ(dev.name(), name);
  auto q = dev.open_queue();  // attaches inside the namespace
  EXPECT_GE(q->fd(), 0);
  EXPECT_EQ(std::filesystem::read_symlink("/proc/thread-self/ns/net"), before);
}

TEST_F(TapNetns, UnknownNamespaceIsAnError) {
  EXPECT_THROW(tap_device::create_in_netns("no-such-netns-here", {"ubq0", 0, false}),
               std::system_error);
  EXPECT_THROW(tap_device::create_in_netns("../etc", {"ubq0", 0, false}), std::system_error);
}

}  // namespace
}  // namespace unetback::tap
