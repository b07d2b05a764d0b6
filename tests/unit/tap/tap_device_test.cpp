// tap_device: creation flags, queues, interface settings, persistence.

#include <gtest/gtest.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
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
  { tap_device dev = tap_device::create({kept, 0, true}); }
  EXPECT_TRUE(exists(kept));  // a restarted daemon finds it again
  tap_device again = tap_device::create({kept, 0, false});
  auto q = again.open_queue();
  again.remove();
  EXPECT_TRUE(exists(kept));  // a queue fd still holds it
  q.reset();
  EXPECT_FALSE(exists(kept));
}

TEST_F(TapDevice, EveryFrameGoesToTheOpenQueueNotTheControlFd) {
  const std::string name = unique_name();
  tap_device dev = tap_device::create({name, 0, false});
  EXPECT_TRUE(exists(name));  // kept alive by the detached control fd alone
  auto q = dev.open_queue();
  dev.set_up(true);
  testing::packet_socket sender(dev.ifindex(), 0x88b5);
  for (std::uint8_t i = 0; i < 20; ++i) {
    sender.send(testing::ether_frame(0x88b5, std::vector<std::uint8_t>(50, i)));
  }
  std::vector<std::byte> buf(4096);
  int received = 0;
  while (testing::wait_readable(q->fd(), 500)) {
    const long n = q->read_frame(buf);
    if (n > 26 && buf[12 + 12] == std::byte{0x88} && buf[12 + 13] == std::byte{0xb5}) {
      ++received;
    }
  }
  EXPECT_EQ(received, 20);
}

TEST_F(TapDevice, CarrierFollowsSetCarrier) {
  const std::string name = unique_name();
  tap_device dev = tap_device::create({name, 0, false});
  auto q = dev.open_queue();
  dev.set_up(true);
  dev.set_carrier(false);
  EXPECT_EQ(sysfs(name, "carrier"), "0");
  dev.set_carrier(true);
  EXPECT_EQ(sysfs(name, "carrier"), "1");
  q->set_enabled(false);
  q->set_enabled(true);
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

namespace unetback::tap {
namespace {

TEST(TapBridge, AddToBridgeEnslavesTheTap) {
  if (!testing::can_create_taps() || std::system("ip -V >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "needs root, /dev/net/tun and iproute2 (test setup only)";
  }
  const std::string bridge = testing::unique_name("ubb");
  ASSERT_EQ(std::system(("ip link add " + bridge + " type bridge").c_str()), 0);
  const std::string name = testing::unique_name();
  {
    tap_device dev = tap_device::create({name, 0, false});
    add_to_bridge(bridge, dev.ifindex());
    EXPECT_EQ(std::filesystem::read_symlink("/sys/class/net/" + name + "/master").filename(),
              bridge);
    EXPECT_THROW(add_to_bridge("no-such-br", dev.ifindex()), std::system_error);
  }
  (void)std::system(("ip link del " + bridge).c_str());
}

}  // namespace
}  // namespace unetback::tap
