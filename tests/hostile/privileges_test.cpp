// Least privilege (issue #6 item 5, §6.2 item 31): once set up, unetbackd
// holds only the capabilities its platform needs at run time (sim:
// CAP_NET_ADMIN for the TAPs, CAP_SYS_PTRACE for the guests' memory files),
// in every thread, with the bounding set reduced so nothing can be regained,
// and a hostile guest's connect/disconnect cycle does not change that. Every
// thread runs under the seccomp allow-list (#17 item 4).

#include <linux/capability.h>
#include <pwd.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

constexpr std::uint64_t allowed =
    (std::uint64_t{1} << CAP_NET_ADMIN) | (std::uint64_t{1} << CAP_SYS_PTRACE);

/// The value of `field` in a /proc/.../status file, as text ("" when missing).
std::string status_text(const std::filesystem::path& status, const std::string& field) {
  std::ifstream in(status);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      return line.substr(line.find_first_not_of(" \t", field.size() + 1));
    }
  }
  return "";
}

/// A hexadecimal capability mask ("CapEff:") of /proc/.../status.
std::uint64_t cap_field(const std::filesystem::path& status, const std::string& field) {
  std::ifstream in(status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stoull(line.substr(field.size() + 1), nullptr, 16);
    }
  }
  ADD_FAILURE() << field << " not found in " << status;
  return ~std::uint64_t{0};
}

class Privileges : public hostile_test {
 protected:
  /// Every thread of the daemon holds nothing beyond `allowed`.
  void expect_least_privilege() {
    const std::filesystem::path tasks = "/proc/" + std::to_string(w().daemon().pid()) + "/task";
    int threads = 0;
    for (const auto& t : std::filesystem::directory_iterator(tasks)) {
      ++threads;
      for (const char* field : {"CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"}) {
        const std::uint64_t mask = cap_field(t.path() / "status", field);
        EXPECT_EQ(mask & ~allowed, 0U)
            << t.path().filename().string() << " " << field << " = " << std::hex << mask;
      }
      // seccomp mode 2: the allow-list, inherited by every thread.
      EXPECT_EQ(status_text(t.path() / "status", "Seccomp"), "2") << t.path();
      EXPECT_EQ(status_text(t.path() / "status", "NoNewPrivs"), "1") << t.path();
    }
    EXPECT_GE(threads, 2) << "expected the main thread and the good guest's queue worker";
  }
};

TEST_F(Privileges, DaemonDropsCapabilitiesAfterSetup) {
  expect_least_privilege();
}

TEST_F(Privileges, GuestReconnectsDoNotRegainCapabilities) {
  manual_frontend m(guest(), 2, true, true);
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  begin_attack();
  expect_least_privilege();  // queue workers and the control-ring thread exist now
  expect_contained();
}

// The packaged service's shape (--user; any unprivileged account shows the same):
// the running daemon has left uid 0 in all four uids and gids, keeps only the
// sim platform's capabilities and runs under the seccomp allow-list.
TEST(PrivilegesAsUser, TheRunningDaemonHasTheUsersIdsAndTheSyscallFilter) {
  const struct passwd* nobody = ::getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  const std::string uid = std::to_string(nobody->pw_uid);
  const std::string gid = std::to_string(nobody->pw_gid);
  world w({{"--user", "nobody"}});
  const std::filesystem::path status = "/proc/" + std::to_string(w.daemon().pid()) + "/status";
  // The control socket (what the world waits for) is bound a moment before the drop.
  ASSERT_TRUE(wait_until([&] { return status_text(status, "Seccomp") == "2"; }, state_timeout))
      << w.daemon_log();
  EXPECT_EQ(status_text(status, "Uid"), uid + "\t" + uid + "\t" + uid + "\t" + uid);
  EXPECT_EQ(status_text(status, "Gid"), gid + "\t" + gid + "\t" + gid + "\t" + gid);
  EXPECT_EQ(cap_field(status, "CapEff"), allowed);
  EXPECT_EQ(cap_field(status, "CapPrm"), allowed);
  EXPECT_EQ(cap_field(status, "CapBnd"), allowed);
  EXPECT_EQ(cap_field(status, "CapAmb"), 0U);
  EXPECT_EQ(status_text(status, "Seccomp"), "2");
  EXPECT_EQ(status_text(status, "NoNewPrivs"), "1");
  struct stat st {};
  ASSERT_EQ(::stat((w.dir() / "state").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, nobody->pw_uid) << "the state directory is handed to the user";
  EXPECT_TRUE(w.daemon().alive()) << w.daemon_log();
}

}  // namespace
}  // namespace unetback::hostile
