// xenstored permission rules as a guest experiences them.

#include <gtest/gtest.h>

#include <array>
#include <cerrno>

#include "sim_fixture.hpp"

namespace unetback::xs::testing {
namespace {

using XsPermissions = sim_xenstore_test;

int error_of(const std::function<void()>& op) {
  try {
    op();
  } catch (const xs::error& e) {
    return e.code().value();
  }
  return 0;
}

// What libxl writes for a vif: backend dir dom0's with the guest reading it.
void make_backend(client& tool, domid d) {
  const std::string be = "/local/domain/0/backend/vif/" + std::to_string(d.value()) + "/0";
  tool.write(be + "/state", "1");
  const std::array<permission, 2> perms{permission{domid{0}, access::none},
                                        permission{d, access::read}};
  tool.set_permissions(be, perms);
  tool.set_permissions(be + "/state", perms);
}

TEST_F(XsPermissions, GuestCannotWriteTheBackendDirectory) {
  client tool = dom0();
  make_backend(tool, domid{3});
  client g = guest(domid{3});
  const std::string be = "/local/domain/0/backend/vif/3/0";
  EXPECT_EQ(g.read(be + "/state"), "1");
  EXPECT_EQ(error_of([&] { g.write(be + "/state", "4"); }), EACCES);
  EXPECT_EQ(error_of([&] { g.write(be + "/feature-sg", "1"); }), EACCES);
  EXPECT_EQ(error_of([&] { g.rm(be); }), EACCES);
  EXPECT_EQ(tool.read(be + "/state"), "1");
  EXPECT_EQ(tool.read(be + "/feature-sg"), std::nullopt);
}

TEST_F(XsPermissions, GuestCannotReadWhatItWasNotGranted) {
  client tool = dom0();
  tool.write("/local/domain/0/secret", "x");
  client g = guest(domid{4});
  EXPECT_EQ(error_of([&] { (void)g.read("/local/domain/0/secret"); }), EACCES);
  EXPECT_EQ(error_of([&] { (void)g.directory("/local/domain/0"); }), EACCES);
  // Probing below an unreadable node must not reveal whether it exists.
  EXPECT_EQ(error_of([&] { (void)g.read("/local/domain/0/nothing/here"); }), EACCES);
}

TEST_F(XsPermissions, GuestCannotReadAnotherGuestsHome) {
  client g5 = guest(domid{5});
  g5.write("device/vif/0/tx-ring-ref", "8");
  client g6 = guest(domid{6});
  EXPECT_EQ(error_of([&] { (void)g6.read("/local/domain/5/device/vif/0/tx-ring-ref"); }), EACCES);
  EXPECT_EQ(error_of([&] { g6.write("/local/domain/5/device/vif/0/state", "4"); }), EACCES);
}

TEST_F(XsPermissions, NodesAGuestCreatesAreOwnedByTheGuest) {
  client g = guest(domid{8});
  g.write("device/vif/0/state", "4");
  const auto perms = g.get_permissions("device/vif/0/state");
  ASSERT_FALSE(perms.empty());
  EXPECT_EQ(perms.front().id, domid{8});
  client tool = dom0();
  EXPECT_EQ(tool.read("/local/domain/8/device/vif/0/state"), "4");
}

TEST_F(XsPermissions, NodesDom0CreatesInAGuestHomeKeepTheGuestAsOwner) {
  client tool = dom0();
  introduce(domid{9});
  tool.write("/local/domain/9/device/vif/0/backend-id", "0");
  EXPECT_EQ(tool.get_permissions("/local/domain/9/device/vif/0/backend-id").front().id, domid{9});
}

TEST_F(XsPermissions, GuestMayNotGiveAwayItsNodes) {
  client g = guest(domid{10});
  g.write("data/x", "1");
  const std::array<permission, 1> to_dom0{permission{domid{0}, access::none}};
  EXPECT_EQ(error_of([&] { g.set_permissions("data/x", to_dom0); }), EPERM);
  const std::array<permission, 2> share{permission{domid{10}, access::none},
                                        permission{domid{0}, access::read}};
  EXPECT_NO_THROW(g.set_permissions("data/x", share));
}

TEST_F(XsPermissions, GuestCannotChangePermissionsOfNodesItDoesNotOwn) {
  client tool = dom0();
  make_backend(tool, domid{11});
  client g = guest(domid{11});
  const std::array<permission, 1> open{permission{domid{11}, access::both}};
  EXPECT_EQ(error_of([&] { g.set_permissions("/local/domain/0/backend/vif/11/0", open); }), EACCES);
}

TEST_F(XsPermissions, GuestQuotaOnNodesIsEnforced) {
  client g = guest(domid{12});
  int err = 0;
  for (int i = 0; i < 1100 && err == 0; ++i) {
    err = error_of([&] { g.write("q/" + std::to_string(i), "x"); });
  }
  EXPECT_EQ(err, ENOSPC);
}

}  // namespace
}  // namespace unetback::xs::testing
