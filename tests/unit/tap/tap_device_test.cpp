// tap_device: creation flags, queues, interface settings, persistence.

#include <gtest/gtest.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "tap_test_util.hpp"
#include "unetback/tap/tap_device.hpp"

namespace unetback::tap {
namespace {

using testing::sysfs;
using testing::unique_name;

class TapDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::can_create_taps()) {
      GTEST_SKIP() << "needs root and /dev/net/tun";
    }
  }
  static bool exists(const std::string& name) {
    return std::filesystem::exists("/sys/class/net/" + name);
  }
};

TEST_F(TapDevice, CreatesAMultiQueueVnetHdrTapWithTwoQueues) {
  const std::string name = unique_name();
  tap_device dev = tap_device::create({name, TUN_F_CSUM, false});
  auto queues = dev.open_queues(2);
  ASSERT_EQ(queues.size(), 2U);
  EXPECT_NE(queues[0]->fd(), queues[1]->fd());
  EXPECT_EQ(queues[0]->vnet_hdr_size(), 12U);
  EXPECT_EQ(dev.name(), name);
  EXPECT_EQ(dev.ifindex(), static_cast<int>(if_nametoindex(name.c_str())));
  const unsigned long flags = std::stoul(sysfs(name, "tun_flags").value(), nullptr, 16);
  EXPECT_EQ(flags & (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE),
            static_cast<unsigned long>(IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE));
}

TEST_F(TapDevice, MacMtuAndLinkStateAreSetByIoctl) {
  const std::string name = unique_name();
  tap_device dev = tap_device::create({name, 0, false});
  dev.set_mac(backend_vif_mac);
  dev.set_mtu(9000);
  dev.set_up(true);
  EXPECT_EQ(sysfs(name, "address"), "fe:ff:ff:ff:ff:ff");
  EXPECT_EQ(sysfs(name, "mtu"), "9000");
  EXPECT_EQ(dev.mtu(), 9000U);
  EXPECT_EQ(dev.mac(), backend_vif_mac);
  EXPECT_TRUE(dev.is_up());
  dev.set_up(false);
  EXPECT_FALSE(dev.is_up());
}

TEST_F(TapDevice, InterfaceGoesAwayWithTheLastFdUnlessPersistent) {
  const std::string transient = unique_name();
  {
    tap_device dev = tap_device::create({transient, 0, false});
    auto q = dev.open_queue();
    EXPECT_TRUE(exists(transient));
  }
  EXPECT_FALSE(exists(transient));

  const std::string kept = unique_name();
  {
    tap_device dev = tap_device::create({kept, 0, true});
  }
  EXPECT_TRUE(exists(kept));  // a restarted daemon finds it again
  tap_device again = tap_device::create({kept, 0, false});
  auto q = again.open_queue();
  again.remove();
  EXPECT_TRUE(exists(kept));  // a queue fd still holds it
  q.reset();
  EXPECT_FALSE(exists(kept));
}

TEST_F(TapDevice, ControlFdDoesNotCountAsAnActiveQueue) {
  const std::string name = unique_name();
  tap_device dev = tap_device::create({name, 0, false});
  EXPECT_TRUE(exists(name));  // kept alive by the detached control fd
  auto q = dev.open_queue();
  q->set_enabled(false);
  q->set_enabled(true);
  dev.set_carrier(false);
  EXPECT_EQ(sysfs(name, "carrier_changes").has_value(), true);
  dev.set_carrier(true);
}

TEST_F(TapDevice, RenamedInterfaceIsStillFoundByIfindex) {
  const std::string name = unique_name();
  const std::string renamed = unique_name("ubr");
  tap_device dev = tap_device::create({name, 0, false});
  const int sock = ::socket(AF_UNIX, SOCK_DGRAM, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  std::strncpy(ifr.ifr_newname, renamed.c_str(), IFNAMSIZ - 1);
  ASSERT_EQ(::ioctl(sock, SIOCSIFNAME, &ifr), 0);
  ::close(sock);
  EXPECT_EQ(dev.name(), renamed);
  dev.set_mtu(1400);
  EXPECT_EQ(sysfs(renamed, "mtu"), "1400");
  auto q = dev.open_queue();  // attaches by the new name
  EXPECT_GE(q->fd(), 0);
}

TEST_F(TapDevice, NameLongerThan15CharactersIsRefused) {
  EXPECT_THROW(tap_device::create({"vif65535.65535xx", 0, false}), std::system_error);
}

TEST_F(TapDevice, NameOfANonTapInterfaceIsRefused) {
  EXPECT_THROW(tap_device::create({"lo", 0, false}), std::system_error);
}

}  // namespace
}  // namespace unetback::tap
