#include <gtest/gtest.h>

#include "unetback/xs/sim/path.hpp"

namespace unetback::xs::sim {
namespace {

TEST(XsPath, RelativePathResolvesAgainstTheCallersHome) {
  EXPECT_EQ(canonicalize("backend/vif", domid{0}), "/local/domain/0/backend/vif");
  EXPECT_EQ(canonicalize("device/vif/0/state", domid{5}), "/local/domain/5/device/vif/0/state");
}

TEST(XsPath, MalformedNamesAreRefused) {
  EXPECT_FALSE(canonicalize("", domid{0}));
  EXPECT_FALSE(canonicalize("/a//b", domid{0}));
  EXPECT_FALSE(canonicalize("/a/", domid{0}));
  EXPECT_FALSE(canonicalize("/a b", domid{0}));
  EXPECT_FALSE(canonicalize("/a/../b", domid{0}));
  EXPECT_FALSE(canonicalize(std::string(3100, 'a').insert(0, "/"), domid{0}));
  EXPECT_TRUE(canonicalize("/", domid{0}));
  EXPECT_TRUE(canonicalize("/a-b_c@d/0", domid{0}));
}

TEST(XsPath, AncestryIsComponentWise) {
  EXPECT_TRUE(is_at_or_below("/a/b", "/a"));
  EXPECT_TRUE(is_at_or_below("/a", "/a"));
  EXPECT_FALSE(is_at_or_below("/ab", "/a"));
  EXPECT_TRUE(is_at_or_below("/anything", "/"));
  EXPECT_EQ(parent_of("/a/b"), "/a");
  EXPECT_EQ(parent_of("/a"), "/");
  EXPECT_EQ(basename_of("/a/b"), "b");
}

}  // namespace
}  // namespace unetback::xs::sim
