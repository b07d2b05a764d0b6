#include "unetback/sim/sim_platform.hpp"

#include <stdexcept>

#include "sim_event_channel.hpp"
#include "sim_grant_table.hpp"

namespace unetback::sim {

sim_platform::sim_platform(std::filesystem::path sim_dir, domid self)
    : sim_dir_(std::move(sim_dir)), self_(self) {
  if (!endpoint::address_of(sim_dir_, 1)) {
    throw std::invalid_argument("sim dir '" + sim_dir_.string() +
                                "' is too long for unix socket paths");
  }
}

std::unique_ptr<::unetback::platform::grant_table> sim_platform::open_grant_table() {
  return std::make_unique<sim_grant_table>(sim_dir_, self_);
}

std::unique_ptr<::unetback::platform::event_channel> sim_platform::open_event_channel() {
  return std::make_unique<sim_event_channel>(sim_dir_, self_);
}

}  // namespace unetback::sim
