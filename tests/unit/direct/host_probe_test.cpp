// host_probe reads a vif's bridge port facts from sysfs and procfs; here from a
// fake tree laid out as the kernel lays them out.

#include "unetback/direct/host_probe.hpp"

#include <gtest/gtest.h>
#include <linux/if_bridge.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "unetback/test_support/temp_dir.hpp"

namespace unetback::direct {
namespace {

namespace fs = std::filesystem;

constexpr tap::mac_address guest_mac{0x00, 0x16, 0x3e, 0x12, 0x34, 0x56};
constexpr tap::mac_address other_mac{0x00, 0x16, 0x3e, 0x65, 0x43, 0x21};

class HostProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    write(net("vif3.0") / "ifindex", "7");
    write(net("vif3.0") / "brport/state", "3");
    write(net("vif3.0") / "brport/isolated", "0");
    write(net("vif3.0") / "brport/port_no", "0x102");
    fs::create_directories(net("xenbr0") / "bridge");
    fs::create_symlink("../xenbr0", net("vif3.0") / "master");
    write(net("xenbr0") / "bridge/vlan_filtering", "0");
    fdb({entry(other_mac, 0x001), entry(guest_mac, 0x102)});
    write(root() / "proc/net/packet",
          "sk               RefCnt Type Proto  Iface R Rmem   User   Inode\n"
          "ffff8c5d4e2c8000 3      3    0003   2     1 0      0      20501\n");
  }

  fs::path root() const { return dir_.path(); }
  fs::path net(const std::string& ifname) const { return root() / "sys/class/net" / ifname; }
  host_probe probe() const { return host_probe(host_roots{root() / "sys", root() / "proc"}); }

  static void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }

  static __fdb_entry entry(const tap::mac_address& mac, unsigned port, bool local = false) {
    __fdb_entry e{};
    std::copy(mac.begin(), mac.end(), std::begin(e.mac_addr));
    e.port_no = static_cast<__u8>(port & 0xFF);
    e.port_hi = static_cast<__u8>(port >> 8);
    e.is_local = local ? 1 : 0;
    return e;
  }

  void fdb(const std::vector<__fdb_entry>& entries) const {
    std::ofstream out(net("xenbr0") / "brforward", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(entries.data()),  // NOLINT: a kernel struct
              static_cast<std::streamsize>(entries.size() * sizeof(__fdb_entry)));
  }

 private:
  test_support::temp_dir dir_{"hostprobe."};
};

TEST_F(HostProbe, AForwardingPortWhoseFdbEntryIsItsOwnIsOpen) {
  const auto f = probe().port("vif3.0", guest_mac);
  EXPECT_EQ(f.bridge, "xenbr0");
  EXPECT_TRUE(f.forwarding);
  EXPECT_FALSE(f.isolated);
  EXPECT_TRUE(f.fdb_age_cs.has_value());
  EXPECT_FALSE(f.packet_socket);
}

TEST_F(HostProbe, WithoutAFilterSnapshotEveryFilterCountsAsPresent) {
  EXPECT_TRUE(probe().port("vif3.0", guest_mac).tc_or_xdp);
  EXPECT_TRUE(probe().port("vif3.0", guest_mac).netdev_rules);
  EXPECT_TRUE(probe().bridge("xenbr0").bridge_rules);
}

TEST_F(HostProbe, TheFilterSnapshotIsLookedUpByTheVifsIfindexAndName) {
  filter_facts filters;
  filters.known = true;
  EXPECT_FALSE(probe().port("vif3.0", guest_mac, filters).tc_or_xdp);
  EXPECT_FALSE(probe().port("vif3.0", guest_mac, filters).netdev_rules);
  EXPECT_FALSE(probe().bridge("xenbr0", filters).bridge_rules);
  filters.filtered_devices = {6};
  filters.netdev_hooked = {"vif3.1"};
  EXPECT_FALSE(probe().port("vif3.0", guest_mac, filters).tc_or_xdp);
  EXPECT_FALSE(probe().port("vif3.0", guest_mac, filters).netdev_rules);
  filters.filtered_devices = {7};  // vif3.0's ifindex
  filters.netdev_hooked = {"vif3.0"};
  EXPECT_TRUE(probe().port("vif3.0", guest_mac, filters).tc_or_xdp);
  EXPECT_TRUE(probe().port("vif3.0", guest_mac, filters).netdev_rules);
  filters.bridge_tables = true;
  EXPECT_TRUE(probe().bridge("xenbr0", filters).bridge_rules);
}

TEST_F(HostProbe, PortStateAndIsolationAreRead) {
  write(net("vif3.0") / "brport/state", "1");  // BR_STATE_LISTENING
  write(net("vif3.0") / "brport/isolated", "1");
  const auto f = probe().port("vif3.0", guest_mac);
  EXPECT_FALSE(f.forwarding);
  EXPECT_TRUE(f.isolated);
}

TEST_F(HostProbe, ThePortsMtuIsReadEachTime) {
  EXPECT_FALSE(probe().port("vif3.0", guest_mac).mtu.has_value()) << "no mtu file";
  write(net("vif3.0") / "mtu", "1500");
  EXPECT_EQ(probe().port("vif3.0", guest_mac).mtu, std::optional<std::uint32_t>{1500U});
  write(net("vif3.0") / "mtu", "1300");
  EXPECT_EQ(probe().port("vif3.0", guest_mac).mtu, std::optional<std::uint32_t>{1300U});
}

TEST_F(HostProbe, TheFdbMustGiveThisPortForTheGuestsMac) {
  fdb({entry(guest_mac, 0x001)});
  EXPECT_FALSE(probe().port("vif3.0", guest_mac).fdb_age_cs.has_value());
  fdb({entry(guest_mac, 0x102, true)});  // a local entry is the bridge's own address
  EXPECT_FALSE(probe().port("vif3.0", guest_mac).fdb_age_cs.has_value());
  fdb({entry(other_mac, 0x102)});  // not learned yet
  EXPECT_FALSE(probe().port("vif3.0", guest_mac).fdb_age_cs.has_value());
}

TEST_F(HostProbe, TheFdbEntrysAgeAndTheBridgesAgeingTimeAreRead) {
  auto e = entry(guest_mac, 0x102);
  e.ageing_timer_value = 1234;  // USER_HZ: 12.34 s since the bridge last saw the MAC
  fdb({entry(other_mac, 0x001), e});
  EXPECT_EQ(probe().port("vif3.0", guest_mac).fdb_age_cs, std::optional<std::uint32_t>{1234U});
  EXPECT_EQ(probe().bridge("xenbr0").ageing_time_cs, 0U) << "no ageing_time file";
  write(net("xenbr0") / "bridge/ageing_time", "30000");
  EXPECT_EQ(probe().bridge("xenbr0").ageing_time_cs, 30000U);
}

TEST_F(HostProbe, AnFdbLongerThanTheLimitIsNotTrusted) {
  fdb({entry(other_mac, 1), entry(other_mac, 2), entry(guest_mac, 0x102)});
  const host_probe limited(host_roots{root() / "sys", root() / "proc"}, host_probe_limits{2, 16});
  EXPECT_FALSE(limited.port("vif3.0", guest_mac).fdb_age_cs.has_value());
  EXPECT_TRUE(probe().port("vif3.0", guest_mac).fdb_age_cs.has_value());
}

TEST_F(HostProbe, PacketSocketsOnTheVifOrOnEveryDeviceAreSeen) {
  const std::string header = "sk               RefCnt Type Proto  Iface R Rmem   User   Inode\n";
  write(root() / "proc/net/packet", header + "ffff8c5d4e2c8800 3 3 0003 7 1 0 0 20502\n");
  EXPECT_TRUE(probe().port("vif3.0", guest_mac).packet_socket);
  write(root() / "proc/net/packet", header + "ffff8c5d4e2c8800 3 3 0003 0 1 0 0 20502\n");
  EXPECT_TRUE(probe().port("vif3.0", guest_mac).packet_socket);
  write(root() / "proc/net/packet", header + "garbage\n");
  EXPECT_TRUE(probe().port("vif3.0", guest_mac).packet_socket);
  fs::remove(root() / "proc/net/packet");
  EXPECT_TRUE(probe().port("vif3.0", guest_mac).packet_socket);
}

TEST_F(HostProbe, AVifOnNoBridgeHasNoBridge) {
  fs::remove(net("vif3.0") / "master");
  const auto f = probe().port("vif3.0", guest_mac);
  EXPECT_TRUE(f.bridge.empty());
  EXPECT_FALSE(f.forwarding);
}

TEST_F(HostProbe, NamesThatAreNoInterfaceNamesAreRefused) {
  for (const char* bad : {"", ".", "..", "../../etc", "a/b", "sixteen-chars-xx"}) {
    EXPECT_TRUE(probe().port(bad, guest_mac).bridge.empty()) << bad;
    EXPECT_TRUE(probe().bridge(bad).vlan_filtering) << bad;
  }
}

TEST_F(HostProbe, VlanFilteringIsRead) {
  EXPECT_FALSE(probe().bridge("xenbr0").vlan_filtering);
  write(net("xenbr0") / "bridge/vlan_filtering", "1");
  EXPECT_TRUE(probe().bridge("xenbr0").vlan_filtering);
}

TEST_F(HostProbe, BrNetfilterCountsOnlyWhenTheModuleIsLoaded) {
  write(net("xenbr0") / "bridge/nf_call_iptables", "1");
  EXPECT_FALSE(probe().bridge("xenbr0").br_netfilter);  // no /proc/sys/net/bridge
  write(root() / "proc/sys/net/bridge/bridge-nf-call-iptables", "0");
  EXPECT_TRUE(probe().bridge("xenbr0").br_netfilter);  // the bridge's own switch
  write(net("xenbr0") / "bridge/nf_call_iptables", "0");
  EXPECT_FALSE(probe().bridge("xenbr0").br_netfilter);
  write(root() / "proc/sys/net/bridge/bridge-nf-call-ip6tables", "1");
  EXPECT_TRUE(probe().bridge("xenbr0").br_netfilter);  // the global one
}

}  // namespace
}  // namespace unetback::direct
