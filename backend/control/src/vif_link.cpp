// What the host does to a vif's TAP outside the data path: the bridge it is
// on (the hotplug script's doing) and its deletion, from link messages. The
// TAP is known by its ifindex: a hotplug script may rename it, and once it
// is deleted its name can no longer be asked for.

#include <net/if.h>
#include <spdlog/spdlog.h>

#include <system_error>

#include "unetback/control/vif.hpp"

namespace unetback::control {
namespace {

std::string interface_name(int index) {
  char buf[IF_NAMESIZE] = {};
  return index > 0 && ::if_indextoname(static_cast<unsigned>(index), buf) != nullptr
             ? std::string(buf)
             : "ifindex " + std::to_string(index);
}

}  // namespace

std::string vif::tap_name() const {
  if (!tap_) {
    return {};
  }
  try {
    return tap_->name();
  } catch (const std::system_error&) {
    return "(deleted)";
  }
}

void vif::note_link(const tap::link_event& e) {
  if (!tap_ || e.index == 0 || e.index != tap_->ifindex()) {
    return;
  }
  if (e.deleted) {
    spdlog::warn("{}: TAP {} was deleted on the host", tag(), e.name);
    tap_master_ = 0;
    return;
  }
  if (e.master == tap_master_) {
    return;
  }
  if (e.master == 0) {
    spdlog::warn(
        "{}: TAP {} left bridge {}: the guest is cut off from the host network until "
        "the TAP is on a bridge again",
        tag(), e.name, tap_master_name_);
  } else {
    tap_master_name_ = interface_name(e.master);
    spdlog::info("{}: TAP {} is on bridge {}", tag(), e.name, tap_master_name_);
  }
  tap_master_ = e.master;
}

}  // namespace unetback::control
