// make_platform() and the xen platform's behaviour without Xen.
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <gtest/gtest.h>

#include "unetback/platform/factory.hpp"

namespace unetback::test {
namespace {

TEST(PlatformFactory, UnknownPlatformNameIsRejected) {
  EXPECT_THROW(platform::make_platform("kvm", {}), std::invalid_argument);
  EXPECT_THROW(platform::make_platform("", {}), std::invalid_argument);
}

TEST(PlatformFactory, NamesSelectTheImplementation) {
  platform::platform_options o;
  o.sim_dir = "/tmp/unetback-factory-test";
  o.self = domid{3};
  auto sim = platform::make_platform("sim", o);
  EXPECT_EQ(sim->name(), "sim");
  EXPECT_EQ(sim->self(), domid{3});
  auto xen = platform::make_platform("xen", o);
  EXPECT_EQ(xen->name(), "xen");
  EXPECT_EQ(xen->self(), domid{3});
}

TEST(PlatformFactory, OverlongSimDirIsRejected) {
  platform::platform_options o;
  o.sim_dir = "/tmp/" + std::string(120, 'x');
  EXPECT_THROW(platform::make_platform("sim", o), std::invalid_argument);
}

TEST(XenPlatform, OpeningHandlesWithoutXenFailsWithSystemError) {
  if (std::filesystem::exists("/dev/xen/gntdev") || std::filesystem::exists("/dev/xen/evtchn")) {
    GTEST_SKIP() << "running on a Xen host";
  }
  auto xen = platform::make_platform("xen", {});
  EXPECT_THROW(xen->open_grant_table(), std::system_error);
  EXPECT_THROW(xen->open_event_channel(), std::system_error);
}

}  // namespace
}  // namespace unetback::test
