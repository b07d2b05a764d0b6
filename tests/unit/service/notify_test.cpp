// sd_notify integration: what systemd receives for a Type=notify unit, and that
// nothing is sent (and nothing fails) outside systemd.
#include <gtest/gtest.h>

#include <cstdlib>

#include "test_support.hpp"
#include "unetback/service/notify.hpp"

namespace unetback::service {
namespace {

using namespace std::chrono_literals;

TEST(Notify, ReadyReachesSystemdWithStatus) {
  test::fake_notify_socket systemd;
  EXPECT_TRUE(notify_ready("serving 0 vifs"));
  EXPECT_EQ(systemd.receive(1s), "READY=1\nSTATUS=serving 0 vifs");
}

TEST(Notify, ReadyWithoutStatusSendsOnlyReady) {
  test::fake_notify_socket systemd;
  EXPECT_TRUE(notify_ready());
  EXPECT_EQ(systemd.receive(1s), "READY=1");
}

TEST(Notify, StoppingIsAnnouncedBeforeVifsAreWalkedToClosed) {
  test::fake_notify_socket systemd;
  EXPECT_TRUE(notify_stopping("closing 2 vifs"));
  EXPECT_EQ(systemd.receive(1s), "STOPPING=1\nSTATUS=closing 2 vifs");
}

TEST(Notify, StatusWithNewlineCannotInjectAnotherAssignment) {
  // A vif name or error text in STATUS must not become "READY=1" or "MAINPID=...".
  test::fake_notify_socket systemd;
  EXPECT_TRUE(notify_status("bad vif\nREADY=1"));
  EXPECT_EQ(systemd.receive(1s), "STATUS=bad vif READY=1");
}

TEST(Notify, OutsideSystemdEverythingIsANoOp) {
  ::unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(notify_ready("x"));
  EXPECT_FALSE(notify_stopping());
  EXPECT_FALSE(notify_status("x"));
}

}  // namespace
}  // namespace unetback::service
