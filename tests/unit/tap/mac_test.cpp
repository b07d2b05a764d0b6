#include <gtest/gtest.h>

#include "unetback/tap/mac.hpp"

namespace unetback::tap {
namespace {

TEST(Mac, ParsesTheToolstackFormat) {
  const auto mac = parse_mac("00:16:3E:0a:ff:02");
  ASSERT_TRUE(mac);
  EXPECT_EQ(*mac, (mac_address{0x00, 0x16, 0x3e, 0x0a, 0xff, 0x02}));
  EXPECT_EQ(to_string(*mac), "00:16:3e:0a:ff:02");
}

TEST(Mac, RejectsAnythingElse) {
  EXPECT_FALSE(parse_mac(""));
  EXPECT_FALSE(parse_mac("00:16:3e:0a:ff"));
  EXPECT_FALSE(parse_mac("00:16:3e:0a:ff:02:03"));
  EXPECT_FALSE(parse_mac("00-16-3e-0a-ff-02"));
  EXPECT_FALSE(parse_mac("0g:16:3e:0a:ff:02"));
  EXPECT_FALSE(parse_mac("00:16:3e:0a:ff:2 "));
}

}  // namespace
}  // namespace unetback::tap
