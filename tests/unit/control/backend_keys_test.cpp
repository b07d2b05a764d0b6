// Backend (toolstack-written) key validation.

#include <gtest/gtest.h>

#include <map>

#include "key_map.hpp"
#include "unetback/control/backend_keys.hpp"

namespace unetback::control {
namespace {

using keys = testing::key_map;
using testing::reader_of;

// libxl 4.17 as measured (NOTES.md).
keys libxl_backend() {
  return {{"frontend", "/local/domain/1/device/vif/0"},
          {"frontend-id", "1"},
          {"online", "1"},
          {"state", "1"},
          {"script", "/etc/xen/scripts/vif-bridge"},
          {"mac", "00:16:3e:00:00:02"},
          {"bridge", "xenbr0"},
          {"handle", "0"},
          {"type", "vif"},
          {"hotplug-status", ""}};
}

TEST(BackendKeys, LibxlBackendIsAccepted) {
  const keys k = libxl_backend();
  const auto r = parse_backend_keys(reader_of(k), vif_id{domid{1}, 0});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r.value().frontend_path, "/local/domain/1/device/vif/0");
  EXPECT_EQ(r.value().mtu, 1500U);
  EXPECT_EQ(r.value().bridge, "xenbr0");
  EXPECT_EQ(r.value().guest_mac, (tap::mac_address{0, 0x16, 0x3e, 0, 0, 2}));
  EXPECT_FALSE(r.value().rate());
}

TEST(BackendKeys, FrontendPathElsewhereIsRejected) {
  keys k = libxl_backend();
  k["frontend"] = "/local/domain/0/device/vif/0";
  const auto r = parse_backend_keys(reader_of(k), vif_id{domid{1}, 0});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().key, "frontend");
  k["frontend"] = "/local/domain/1/device/vif/0/../../../0";
  EXPECT_FALSE(parse_backend_keys(reader_of(k), vif_id{domid{1}, 0}).has_value());
}

TEST(BackendKeys, FrontendIdDifferentFromTheDirectoryIsRejected) {
  keys k = libxl_backend();
  k["frontend-id"] = "2";
  k["frontend"] = "/local/domain/2/device/vif/0";
  EXPECT_EQ(parse_backend_keys(reader_of(k), vif_id{domid{1}, 0}).error().key, "frontend-id");
}

TEST(BackendKeys, HandleDifferentFromDevidIsRejected) {
  keys k = libxl_backend();
  k["handle"] = "1";
  EXPECT_EQ(parse_backend_keys(reader_of(k), vif_id{domid{1}, 0}).error().key, "handle");
}

TEST(BackendKeys, MtuIsRangeChecked) {
  keys k = libxl_backend();
  k["mtu"] = "9000";
  EXPECT_EQ(parse_backend_keys(reader_of(k), vif_id{domid{1}, 0}).value().mtu, 9000U);
  k["mtu"] = "67";
  EXPECT_EQ(parse_backend_keys(reader_of(k), vif_id{domid{1}, 0}).error().key, "mtu");
  k["mtu"] = "70000";
  EXPECT_FALSE(parse_backend_keys(reader_of(k), vif_id{domid{1}, 0}).has_value());
}

TEST(BackendKeys, MalformedMacIsRejected) {
  keys k = libxl_backend();
  k["mac"] = "00:16:3e:00:00";
  EXPECT_EQ(parse_backend_keys(reader_of(k), vif_id{domid{1}, 0}).error().key, "mac");
  k.erase("mac");
  EXPECT_EQ(parse_backend_keys(reader_of(k), vif_id{domid{1}, 0}).error().what,
            key_error::kind::missing);
}

TEST(BackendKeys, RateIsBytesCommaMicroseconds) {
  keys k = libxl_backend();
  k["rate"] = "125000,20000";
  const auto r = parse_backend_keys(reader_of(k), vif_id{domid{1}, 0});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r.value().rate()->bytes, 125000U);
  EXPECT_EQ(r.value().rate()->usecs, 20000U);
  for (const char* bad :
       {"125000", "125000,", ",20000", "0,20000", "1,0", "1,2,3", "1;2", "-1,5", "1,4294967296"}) {
    EXPECT_FALSE(parse_rate(bad)) << bad;
  }
  EXPECT_EQ(parse_rate("1,4294967295"), (rate_limit_keys{1, 4294967295U}));  // no 10 s cap
}

// Linux's netback leaves a vif with a malformed `rate` unlimited, with a
// warning; failing the vif would break `xl create` for it.
TEST(BackendKeys, MalformedRateMeansUnlimitedNotFailure) {
  keys k = libxl_backend();
  k["rate"] = "10Mb/s";
  const auto r = parse_backend_keys(reader_of(k), vif_id{domid{1}, 0});
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r.value().rate());
  EXPECT_EQ(r.value().rate_text, std::optional<std::string>("10Mb/s"));
}

}  // namespace
}  // namespace unetback::control
