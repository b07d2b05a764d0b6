// A vif's identity: its name is what the TAP, the log lines and unetbackctl
// use, and vifs order by domain first (the supervisor's map and the
// per-vif configuration tables are keyed by it).

#include "unetback/control/vif_id.hpp"

#include <gtest/gtest.h>

#include <set>

namespace unetback::control {
namespace {

TEST(VifId, NameIsVifDomidDotDevid) {
  EXPECT_EQ((vif_id{domid{1}, 0}.name()), "vif1.0");
  EXPECT_EQ((vif_id{domid{domid_max}, 65535}.name()), "vif32751.65535");
}

TEST(VifId, XenstorePathIsDomidSlashDevid) {
  EXPECT_EQ((vif_id{domid{3}, 1}.xenstore_path()), "3/1");
}

TEST(VifId, OrdersByDomainThenDevice) {
  const std::set<vif_id> ids{vif_id{domid{2}, 0}, vif_id{domid{1}, 7}, vif_id{domid{1}, 3},
                             vif_id{domid{1}, 3}};
  ASSERT_EQ(ids.size(), 3U);
  auto it = ids.begin();
  EXPECT_EQ(*it++, (vif_id{domid{1}, 3}));
  EXPECT_EQ(*it++, (vif_id{domid{1}, 7}));
  EXPECT_EQ(*it, (vif_id{domid{2}, 0}));
  EXPECT_NE((vif_id{domid{3}, 0}), (vif_id{domid{0}, 3}));
}

}  // namespace
}  // namespace unetback::control
