// Least privilege (issue #6 item 5, §6.2 item 31): once set up, unetbackd
// holds only the capabilities its platform needs at run time (sim:
// CAP_NET_ADMIN for the TAPs, CAP_SYS_PTRACE for the guests' memory files),
// in every thread, with the bounding set reduced so nothing can be regained,
// and a hostile guest's connect/disconnect cycle does not change that.

#include <linux/capability.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

constexpr std::uint64_t allowed =
    (std::uint64_t{1} << CAP_NET_ADMIN) | (std::uint64_t{1} << CAP_SYS_PTRACE);

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

}  // namespace
}  // namespace unetback::hostile
