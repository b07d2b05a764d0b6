// Least privilege after setup: each test runs drop_privileges in a forked child and
// reads the result back from the kernel (/proc/self/status), not from libcap-ng.
#include <cap-ng.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "test_support.hpp"
#include "unetback/service/privileges.hpp"

namespace unetback::service {
namespace {

constexpr std::uint64_t bit(int cap) {
  return std::uint64_t{1} << cap;
}

// "CapEff=... CapPrm=... CapBnd=... CapInh=... CapAmb=... NoNewPrivs=..." of this process.
std::string kernel_view() {
  std::ifstream status("/proc/self/status");
  std::string line;
  std::string out;
  while (std::getline(status, line)) {
    for (const auto* key :
         {"CapEff:", "CapPrm:", "CapBnd:", "CapInh:", "CapAmb:", "NoNewPrivs:", "Uid:", "Gid:"}) {
      if (line.rfind(key, 0) == 0) {
        std::istringstream value(line.substr(std::strlen(key)));
        std::string v;
        value >> v;
        out += std::string(key, std::strlen(key) - 1) + "=" + v + "\n";
      }
    }
  }
  return out;
}

// The drop's own report, then the kernel's view (sequenced: operands of + are not).
std::string after(const std::string& reported) {
  return reported + "\n" + kernel_view();
}

std::uint64_t field(const std::string& view, const std::string& key, int base = 16) {
  const auto pos = view.find(key + "=");
  if (pos == std::string::npos) {
    return ~std::uint64_t{0};
  }
  return std::stoull(view.substr(pos + key.size() + 1), nullptr, base);
}

// The whole line of Uid: or Gid: (real, effective, saved, filesystem).
std::string ids(const std::string& key) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(key, 0) == 0) {
      return line;
    }
  }
  return key + " missing";
}

class Privileges : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::have_capability(CAP_SETPCAP) || !test::have_capability(CAP_NET_ADMIN)) {
      GTEST_SKIP() << "needs root (CAP_SETPCAP, CAP_NET_ADMIN)";
    }
  }
};

TEST_F(Privileges, DaemonKeepsOnlyNetAdminInEveryCapabilitySet) {
  const auto r = test::run_in_child([] { return after(drop_privileges()); });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.substr(0, r.output.find('\n')), "net_admin");
  EXPECT_EQ(field(r.output, "CapEff"), bit(CAP_NET_ADMIN)) << r.output;
  EXPECT_EQ(field(r.output, "CapPrm"), bit(CAP_NET_ADMIN)) << r.output;
  EXPECT_EQ(field(r.output, "CapBnd"), bit(CAP_NET_ADMIN)) << r.output;
  EXPECT_EQ(field(r.output, "CapInh"), 0U) << r.output;
  EXPECT_EQ(field(r.output, "CapAmb"), 0U) << r.output;
  EXPECT_EQ(field(r.output, "NoNewPrivs"), 1U) << r.output;
}

TEST_F(Privileges, DroppedCapabilityIsRefusedAndKeptOneStillWorks) {
  test::temp_dir dir;
  const auto file = (dir.path() / "owned-by-root").string();
  std::ofstream(file) << "x";
  const auto r = test::run_in_child([&] {
    drop_privileges();
    std::string out;
    // CAP_CHOWN is gone: giving a file away fails.
    out +=
        ::chown(file.c_str(), 1, 1) == 0 ? "chown=ok\n" : "chown=" + std::to_string(errno) + "\n";
    // CAP_NET_ADMIN is kept: creating a (non-persistent) TAP still works.
    const int tun = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (tun < 0) {
      return out + "tap=unavailable\n";
    }
    ifreq ifr{};
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE;
    std::strcpy(ifr.ifr_name, "ubcap%d");
    out += ::ioctl(tun, TUNSETIFF, &ifr) == 0 ? "tap=ok\n" : "tap=" + std::to_string(errno) + "\n";
    ::close(tun);
    return out;
  });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("chown=" + std::to_string(EPERM)), std::string::npos) << r.output;
  if (r.output.find("tap=unavailable") == std::string::npos) {
    EXPECT_NE(r.output.find("tap=ok"), std::string::npos) << r.output;
  }
}

// The packaged service runs as `unetback`; any unprivileged account shows the same.
account nobody() {
  return lookup_account("nobody");
}

TEST_F(Privileges, SwitchingToAUserLeavesUidZeroEverywhereAndKeepsNetAdmin) {
  const account user = nobody();
  const auto r = test::run_in_child([&] {
    std::string out = after(drop_privileges(daemon_capabilities, &user));
    out += ids("Uid:") + "\n" + ids("Gid:") + "\n";
    // Debian's udev makes /dev/net/tun 0666; where it is 0600 (some containers)
    // the user cannot open it, which says nothing about the kept capability.
    const int tun = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    ifreq ifr{};
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE;
    std::strcpy(ifr.ifr_name, "ubuser%d");
    if (tun < 0) {
      out += errno == EACCES ? "tap=no-access\n" : "tap=failed\n";
    } else {
      out += ::ioctl(tun, TUNSETIFF, &ifr) == 0 ? "tap=ok\n" : "tap=failed\n";
      ::close(tun);
    }
    // Root's files are now someone else's: /etc/shadow cannot be read.
    out += ::open("/etc/shadow", O_RDONLY | O_CLOEXEC) < 0 ? "shadow=refused\n" : "shadow=read\n";
    return out;
  });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.substr(0, r.output.find('\n')), "net_admin");
  const std::string uid = std::to_string(user.uid);
  const std::string gid = std::to_string(user.gid);
  EXPECT_NE(r.output.find("Uid:\t" + uid + "\t" + uid + "\t" + uid + "\t" + uid), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Gid:\t" + gid + "\t" + gid + "\t" + gid + "\t" + gid), std::string::npos)
      << r.output;
  EXPECT_EQ(field(r.output, "CapEff"), bit(CAP_NET_ADMIN)) << r.output;
  EXPECT_EQ(field(r.output, "CapPrm"), bit(CAP_NET_ADMIN)) << r.output;
  EXPECT_EQ(field(r.output, "CapBnd"), bit(CAP_NET_ADMIN)) << r.output;
  EXPECT_EQ(field(r.output, "CapAmb"), 0U) << r.output;
  EXPECT_EQ(field(r.output, "NoNewPrivs"), 1U) << r.output;
  EXPECT_EQ(r.output.find("tap=failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("shadow=refused"), std::string::npos) << r.output;
}

TEST_F(Privileges, SwitchingWithoutSetuidIsAnErrorAndChangesNothing) {
  const account user = nobody();
  const auto r = test::run_in_child([&] {
    capng_get_caps_process();
    capng_update(CAPNG_DROP, static_cast<capng_type_t>(CAPNG_EFFECTIVE | CAPNG_PERMITTED),
                 CAP_SETUID);
    capng_apply(CAPNG_SELECT_CAPS);
    try {
      drop_privileges(daemon_capabilities, &user);
      return std::string("switched\n") + ids("Uid:");
    } catch (const std::runtime_error& e) {
      return std::string("error: ") + e.what() + "\n" + ids("Uid:");
    }
  });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("error: switching to user nobody needs CAP_SETUID"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Uid:\t0\t0\t0\t0"), std::string::npos) << r.output;
}

TEST(Account, UnknownAndRootAccountsAreRefusedByName) {
  EXPECT_EQ(lookup_account("nobody").name, "nobody");
  EXPECT_NE(lookup_account("nobody").uid, 0U);
  try {
    (void)lookup_account("unetback-no-such-user");
    FAIL() << "an unknown user was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "user unetback-no-such-user: no such user");
  }
  EXPECT_THROW((void)lookup_account("root"), std::invalid_argument);
}

TEST_F(Privileges, EmptyKeepLeavesNoCapabilityAtAll) {
  const auto r = test::run_in_child([] { return after(drop_privileges({})); });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(field(r.output, "CapEff"), 0U) << r.output;
  EXPECT_EQ(field(r.output, "CapPrm"), 0U) << r.output;
  EXPECT_EQ(field(r.output, "CapBnd"), 0U) << r.output;
}

TEST_F(Privileges, UnderTheUnitsBoundingSetItWorksWithoutSetpcap) {
  // unetbackd.service: CapabilityBoundingSet=CAP_NET_ADMIN, so the daemon starts
  // without CAP_SETPCAP and its bounding set is already small.
  const auto r = test::run_in_child([] {
    capng_get_caps_process();
    capng_clear(CAPNG_SELECT_BOUNDS);
    capng_update(CAPNG_ADD, CAPNG_BOUNDING_SET, CAP_NET_ADMIN);
    capng_apply(CAPNG_SELECT_BOUNDS);
    capng_update(CAPNG_DROP, static_cast<capng_type_t>(CAPNG_EFFECTIVE | CAPNG_PERMITTED),
                 CAP_SETPCAP);
    capng_apply(CAPNG_SELECT_CAPS);
    return after(drop_privileges());
  });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(field(r.output, "CapEff"), bit(CAP_NET_ADMIN)) << r.output;
  EXPECT_EQ(field(r.output, "CapBnd"), bit(CAP_NET_ADMIN)) << r.output;
}

TEST_F(Privileges, FullBoundingSetWithoutSetpcapIsAnError) {
  // Otherwise an exec'd helper could regain every capability as root.
  const auto r = test::run_in_child([] {
    capng_get_caps_process();
    capng_update(CAPNG_DROP, static_cast<capng_type_t>(CAPNG_EFFECTIVE | CAPNG_PERMITTED),
                 CAP_SETPCAP);
    capng_apply(CAPNG_SELECT_CAPS);
    return drop_privileges();
  });
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("without CAP_SETPCAP"), std::string::npos) << r.output;
}

TEST_F(Privileges, RefusesOnceAThreadExistsBecauseCapabilitiesArePerThread) {
  const auto r = test::run_in_child([] {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::thread worker([&] {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return done; });
    });
    std::string out;
    try {
      drop_privileges();
      out = "dropped";
    } catch (const std::logic_error& e) {
      out = std::string("logic_error: ") + e.what();
    }
    {
      const std::lock_guard lock(m);
      done = true;
    }
    cv.notify_one();
    worker.join();
    return out + "\n" + kernel_view();
  });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("logic_error: drop_privileges: 2 threads exist"), std::string::npos)
      << r.output;
  EXPECT_NE(field(r.output, "CapEff"), bit(CAP_NET_ADMIN)) << "nothing may have changed";
}

}  // namespace
}  // namespace unetback::service
