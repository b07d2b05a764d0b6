// The production tap_factory over real TAPs: a new TAP is left down for the
// hotplug script, and a restarted daemon adopts the TAP the script renamed
// (backend `vifname`) instead of creating a second, unbridged one.

#include <gtest/gtest.h>
#include <net/if.h>

#include <filesystem>
#include <string>

#include "../tap/tap_test_util.hpp"
#include "unetback/control/tap_factory.hpp"
#include "unetback/tap/tap_device.hpp"

namespace unetback::control {
namespace {

using tap::testing::sysfs;
using tap::testing::unique_name;

class KernelTap : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tap::testing::can_create_taps()) {
      GTEST_SKIP() << "needs root and /dev/net/tun";
    }
  }
  static bool exists(const std::string& name) {
    return std::filesystem::exists("/sys/class/net/" + name);
  }
  static bool is_up(const std::string& name) {
    return (std::stoul(sysfs(name, "flags").value(), nullptr, 16) & IFF_UP) != 0;
  }
  std::unique_ptr<tap_factory> factory_ = make_kernel_tap_factory();
};

TEST_F(KernelTap, ANewTapIsLeftDownWithTheBackendsMacAndMtu) {
  const std::string name = unique_name("ubk");
  auto t = factory_->create({name, 1400, std::nullopt});
  EXPECT_FALSE(is_up(name));  // Linux 6.1 refuses to rename an interface that is up
  EXPECT_EQ(sysfs(name, "address"), "fe:ff:ff:ff:ff:ff");
  EXPECT_EQ(sysfs(name, "mtu"), "1400");
  t->set_up();
  EXPECT_TRUE(is_up(name));
  t->remove();
}

TEST_F(KernelTap, ARestartAdoptsTheTapUnderItsVifname) {
  const std::string name = unique_name("ubk");
  const std::string renamed = unique_name("ubr");
  auto first = factory_->create({name, 1500, renamed});
  const int ifindex = first->ifindex();
  // What the hotplug script does, then a daemon killed: the TAP persists.
  ASSERT_EQ(std::system(("ip link set dev " + name + " name " + renamed).c_str()), 0);
  ASSERT_EQ(std::system(("ip link set dev " + renamed + " mtu 1280 up").c_str()), 0);
  first.reset();
  ASSERT_TRUE(exists(renamed));

  auto again = factory_->create({name, 1500, renamed});
  EXPECT_EQ(again->ifindex(), ifindex);
  EXPECT_EQ(again->name(), renamed);
  EXPECT_FALSE(exists(name));                // no second TAP under the old name
  EXPECT_EQ(sysfs(renamed, "mtu"), "1280");  // adopted as the script left it
  EXPECT_TRUE(is_up(renamed));
  again->remove();
  EXPECT_FALSE(exists(renamed));
}

TEST_F(KernelTap, AVifnameThatIsNotOurTapIsLeftAlone) {
  const std::string name = unique_name("ubk");
  const std::string other = unique_name("ubd");
  ASSERT_EQ(std::system(("ip link add " + other + " type bridge").c_str()), 0);
  auto t = factory_->create({name, 1500, other});
  EXPECT_EQ(t->name(), name);
  EXPECT_TRUE(exists(other));
  t->remove();
  ASSERT_EQ(std::system(("ip link del " + other).c_str()), 0);
}

}  // namespace
}  // namespace unetback::control
