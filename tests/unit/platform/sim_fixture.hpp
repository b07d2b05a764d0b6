#pragma once
// A temporary sim_dir with one simulated guest (dom 5) and the backend's sim
// platform (dom 0), for the platform unit tests.

#include <poll.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "unetback/sim/guest_domain.hpp"
#include "unetback/sim/guest_event_channel.hpp"
#include "unetback/sim/sim_platform.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::test {

inline constexpr domid guest_id{5};
inline constexpr domid backend_id{0};

class sim_fixture : public ::testing::Test {
 protected:
  sim_fixture() {
    guest_ = std::make_unique<sim::guest_domain>(config());
    platform_ = std::make_unique<sim::sim_platform>(dir_, backend_id);
  }
  ~sim_fixture() override {
    platform_.reset();
    guest_.reset();
  }
  [[nodiscard]] sim::domain_config config() const {
    sim::domain_config c;
    c.sim_dir = dir_;
    c.id = guest_id;
    c.page_count = 64;
    c.grant_count = 128;
    c.port_count = 64;
    c.map_record_count = 32;
    return c;
  }
  /// True once `fd` polls readable within `ms` milliseconds.
  static bool readable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, ms) == 1 && (p.revents & POLLIN) != 0;
  }

  test_support::temp_dir tmp_{"unbsim-"};
  std::filesystem::path dir_ = tmp_.path();
  std::unique_ptr<sim::guest_domain> guest_;
  std::unique_ptr<sim::sim_platform> platform_;
};

}  // namespace unetback::test
