// Lifecycle attacks (XSA-349; netif-reference §1.10, §6.2 items 3-5, 30): a
// frontend that flips its state rapidly (valid and invalid values, so the
// data path connects and disconnects over and over), and one that floods its
// watched `state` node and other keys with writes. The daemon must stay
// bounded in memory and file descriptors, serve the other guest, and connect
// this vif normally afterwards.

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "harness/hostile_fixture.hpp"

namespace unetback::hostile {
namespace {

class StateFlips : public hostile_test {
 protected:
  std::size_t daemon_fds() {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(
             fmt::format("/proc/{}/fd", w().daemon().pid()), ec);
         !ec && it != std::filesystem::directory_iterator(); ++it) {
      ++n;
    }
    return n;
  }
};

TEST_F(StateFlips, RapidFrontendStateFlipsAreContained) {
  manual_frontend m(guest(), 2, false, false);
  m.connect();
  ASSERT_TRUE(guest().wait_backend_state({4}));
  const std::size_t fds_before = daemon_fds();
  begin_attack();
  const std::vector<std::string> values{"0", "1",  "2",  "3",   "4",  "5",
                                        "6", "7",  "8",  "9",   "-1", "abc",
                                        "",  "4 ", "04", "0x4", "99", "4294967300"};
  std::mt19937 rng(20240417);
  for (int i = 0; i < 3000; ++i) {
    guest().write_state(values[rng() % values.size()]);
  }
  // Settle and connect properly: the vif must not be wedged.
  ASSERT_TRUE(m.rearm()) << "the vif did not re-arm after the flips";
  m.connect();
  EXPECT_TRUE(guest().wait_backend_state({4}));
  EXPECT_TRUE(w().daemon_alive());
  EXPECT_LE(daemon_fds(), fds_before + 8) << "file descriptors leaked across reconnects";
  expect_contained();
}

TEST_F(StateFlips, WatchEventFloodIsContained) {
  manual_frontend m(guest(), 1, false, false);
  begin_attack();
  for (int i = 0; i < 20000; ++i) {
    guest().write_state("1");  // the node the backend watches
    guest().xs().write(guest().frontend_path() + "/junk", std::to_string(i));
  }
  m.connect();
  EXPECT_TRUE(guest().wait_backend_state({4})) << "the vif did not connect after the flood";
  expect_contained();
}

}  // namespace
}  // namespace unetback::hostile
