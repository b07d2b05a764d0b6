// INTRODUCE / RELEASE: per-domain sockets, special watches, and what a
// released domain leaves behind (XSA-322/XSA-419).

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

#include "sim_fixture.hpp"
#include "unetback/xs/watcher.hpp"

namespace unetback::xs::testing {
namespace {

using XsDomain = sim_xenstore_test;

TEST_F(XsDomain, IntroduceOpensTheDomainSocketAndReleaseRemovesIt) {
  client tool = dom0();
  const auto sock = server_->domain_socket_path(domid{5});
  EXPECT_FALSE(std::filesystem::exists(sock));
  EXPECT_FALSE(xs_is_domain_introduced(tool.native_handle(), 5));
  introduce(domid{5});
  EXPECT_TRUE(std::filesystem::exists(sock));
  EXPECT_TRUE(xs_is_domain_introduced(tool.native_handle(), 5));
  ASSERT_TRUE(xs_release_domain(tool.native_handle(), 5));
  EXPECT_FALSE(std::filesystem::exists(sock));
  EXPECT_FALSE(xs_is_domain_introduced(tool.native_handle(), 5));
}

TEST_F(XsDomain, GuestCannotIntroduceOrReleaseDomains) {
  client g = guest(domid{6});
  errno = 0;
  EXPECT_FALSE(xs_introduce_domain(g.native_handle(), 9, 1, 1));
  EXPECT_EQ(errno, EACCES);
  EXPECT_FALSE(xs_release_domain(g.native_handle(), 6));
}

TEST_F(XsDomain, ReleaseRemovesTheNodesTheGuestOwnedAndItsGrants) {
  client tool = dom0();
  {
    client g = guest(domid{7});
    g.write("device/vif/0/state", "4");
    g.write("device/vif/0/tx-ring-ref", "9");
  }
  tool.write("/local/domain/0/backend/vif/7/0/state", "4");
  const std::array<permission, 2> ro{permission{domid{0}, access::none},
                                     permission{domid{7}, access::read}};
  tool.set_permissions("/local/domain/0/backend/vif/7/0/state", ro);
  boost::asio::io_context io;
  std::vector<std::string> seen;
  watcher w(tool, io.get_executor(),
            [&](std::string_view p, std::string_view) { seen.emplace_back(p); });
  w.add("@releaseDomain", "rel");
  w.add("/local/domain/7/device/vif/0/state", "fe");
  ASSERT_TRUE(run_until(io, [&] { return seen.size() >= 2; }));
  seen.clear();
  ASSERT_TRUE(xs_release_domain(tool.native_handle(), 7));
  ASSERT_TRUE(run_until(io, [&] {
    return std::count(seen.begin(), seen.end(), "@releaseDomain") == 1 &&
           std::count(seen.begin(), seen.end(), "/local/domain/7/device/vif/0/state") >= 1;
  }));
  EXPECT_EQ(tool.read("/local/domain/7/device/vif/0/state"), std::nullopt);
  EXPECT_EQ(tool.get_permissions("/local/domain/0/backend/vif/7/0/state").size(), 1U);
}

TEST_F(XsDomain, GuestConnectionIsClosedOnRelease) {
  client tool = dom0();
  client g = guest(domid{8});
  EXPECT_EQ(g.read("domid"), "8");
  ASSERT_TRUE(xs_release_domain(tool.native_handle(), 8));
  EXPECT_THROW((void)g.read("domid"), xs::error);
}

}  // namespace
}  // namespace unetback::xs::testing
