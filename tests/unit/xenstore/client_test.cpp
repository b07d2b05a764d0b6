// xs::client against sim-xenstored: the basic node operations.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "sim_fixture.hpp"

namespace unetback::xs::testing {
namespace {

using XsClient = sim_xenstore_test;

TEST_F(XsClient, WrittenValueReadsBack) {
  client xs = dom0();
  xs.write("/local/domain/0/backend/vif/1/0/mac", "00:16:3e:00:00:02");
  EXPECT_EQ(xs.read("/local/domain/0/backend/vif/1/0/mac"), "00:16:3e:00:00:02");
  xs.write("/bin", std::string("a\0b", 3));
  EXPECT_EQ(xs.read("/bin"), std::string("a\0b", 3));
}

TEST_F(XsClient, MissingNodeReadsAsNullopt) {
  client xs = dom0();
  EXPECT_EQ(xs.read("/no/such/node"), std::nullopt);
}

TEST_F(XsClient, WriteCreatesParentsAndDirectoryListsChildren) {
  client xs = dom0();
  xs.write("/t/a/x", "1");
  xs.write("/t/b", "2");
  xs.mkdir("/t/c");
  auto children = xs.directory("/t");
  std::sort(children.begin(), children.end());
  EXPECT_EQ(children, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(xs.read("/t/a"), "");
  EXPECT_EQ(xs.read("/t/c"), "");
  EXPECT_TRUE(xs.directory("/t/none").empty());
}

TEST_F(XsClient, MkdirKeepsAnExistingValue) {
  client xs = dom0();
  xs.write("/m", "keep");
  xs.mkdir("/m");
  EXPECT_EQ(xs.read("/m"), "keep");
}

TEST_F(XsClient, RmRemovesTheWholeSubtreeAndToleratesMissingNodes) {
  client xs = dom0();
  xs.write("/r/a/b", "1");
  xs.write("/r/c", "2");
  xs.rm("/r/a");
  EXPECT_EQ(xs.read("/r/a/b"), std::nullopt);
  EXPECT_EQ(xs.read("/r/a"), std::nullopt);
  EXPECT_EQ(xs.read("/r/c"), "2");
  EXPECT_NO_THROW(xs.rm("/r/a"));
}

TEST_F(XsClient, RelativePathsResolveToOwnHome) {
  client xs = dom0();
  xs.write("backend/vif/1/0/state", "1");
  EXPECT_EQ(xs.read("/local/domain/0/backend/vif/1/0/state"), "1");
  EXPECT_EQ(xs.read("backend/vif/1/0/state"), "1");
}

TEST_F(XsClient, OwnDomidComesFromTheDomidKey) {
  client xs = dom0();
  EXPECT_EQ(xs.own_domid(), domid{0});
  EXPECT_EQ(xs.get_domain_path(domid{7}), "/local/domain/7");
  client g = guest(domid{7});
  EXPECT_EQ(g.own_domid(), domid{7});
}

TEST_F(XsClient, MalformedDomidKeyIsAnError) {
  client xs = dom0();
  xs.write("domid", "0x0");
  EXPECT_THROW((void)xs.own_domid(), xs::error);
  xs.rm("domid");
  EXPECT_THROW((void)xs.own_domid(), xs::error);
}

TEST_F(XsClient, PermissionsRoundTrip) {
  client xs = dom0();
  xs.write("/p", "v");
  const std::array<permission, 3> perms{permission{domid{0}, access::none},
                                        permission{domid{3}, access::read},
                                        permission{domid{4}, access::both}};
  xs.set_permissions("/p", perms);
  EXPECT_EQ(xs.get_permissions("/p"), std::vector<permission>(perms.begin(), perms.end()));
}

TEST_F(XsClient, InvalidPathThrowsWithThePathInTheMessage) {
  client xs = dom0();
  try {
    xs.write("/bad//path", "x");
    FAIL() << "expected xs::error";
  } catch (const xs::error& e) {
    EXPECT_EQ(e.code().value(), EINVAL);
    EXPECT_EQ(e.path(), "/bad//path");
    EXPECT_NE(std::string(e.what()).find("/bad//path"), std::string::npos);
  }
}

TEST_F(XsClient, MovedClientKeepsTheConnection) {
  client a = dom0();
  a.write("/mv", "1");
  client b = std::move(a);
  EXPECT_EQ(b.read("/mv"), "1");
  client c = dom0();
  c = std::move(b);
  EXPECT_EQ(c.read("/mv"), "1");
}

}  // namespace
}  // namespace unetback::xs::testing
