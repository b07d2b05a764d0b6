// Refusing to share backend/vif with the kernel's xen-netback (spec §1.11), checked
// against fake sysfs trees.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_support.hpp"
#include "unetback/service/netback_conflict.hpp"

namespace unetback::service {
namespace {

namespace fs = std::filesystem;

class NetbackConflict : public ::testing::Test {
 protected:
  fs::path sys() const { return dir_.path(); }
  void make(const fs::path& rel) { fs::create_directories(sys() / rel); }

  test::temp_dir dir_;
};

TEST_F(NetbackConflict, CleanDom0HasNoConflict) {
  make("module/xen_gntdev");
  make("module/xen_evtchn");
  make("bus/xen-backend/drivers");
  EXPECT_EQ(kernel_netback_conflict(sys()), std::nullopt);
}

TEST_F(NetbackConflict, LoadedModuleIsReportedWithTheFixToApply) {
  make("module/xen_netback/parameters");
  const auto msg = kernel_netback_conflict(sys());
  ASSERT_TRUE(msg.has_value());
  EXPECT_NE(msg->find("xen-netback module is loaded"), std::string::npos) << *msg;
  EXPECT_NE(msg->find("modprobe -r xen-netback"), std::string::npos) << *msg;
  EXPECT_NE(msg->find("unetback.conf"), std::string::npos) << *msg;
}

TEST_F(NetbackConflict, VifDriverServingGuestsIsReportedWithTheirDevices) {
  make("bus/xen-backend/drivers/vif");
  make("bus/xen-backend/devices/vif-3-0");
  make("bus/xen-backend/devices/vif-7-1");
  fs::create_directory_symlink(sys() / "bus/xen-backend/devices/vif-7-1",
                               sys() / "bus/xen-backend/drivers/vif/vif-7-1");
  fs::create_directory_symlink(sys() / "bus/xen-backend/devices/vif-3-0",
                               sys() / "bus/xen-backend/drivers/vif/vif-3-0");
  std::ofstream(sys() / "bus/xen-backend/drivers/vif/uevent") << "";
  const auto msg = kernel_netback_conflict(sys());
  ASSERT_TRUE(msg.has_value());
  EXPECT_NE(msg->find("'vif' driver is registered"), std::string::npos) << *msg;
  EXPECT_NE(msg->find("serves vif-3-0, vif-7-1"), std::string::npos) << *msg;
  EXPECT_EQ(msg->find("uevent"), std::string::npos) << *msg;
}

TEST_F(NetbackConflict, BuiltInNetbackWithoutModuleDirIsStillFound) {
  make("bus/xen-backend/drivers/vif");  // no /sys/module/xen_netback
  EXPECT_TRUE(kernel_netback_conflict(sys()).has_value());
}

TEST_F(NetbackConflict, OtherBackendDriversAreNoConflict) {
  make("bus/xen-backend/drivers/vbd");  // blkback
  make("bus/xen-backend/drivers/vkbd");
  make("module/xen_blkback");
  EXPECT_EQ(kernel_netback_conflict(sys()), std::nullopt);
}

TEST_F(NetbackConflict, MissingSysfsIsNoConflict) {
  EXPECT_EQ(kernel_netback_conflict(sys() / "absent"), std::nullopt);
}

}  // namespace
}  // namespace unetback::service
