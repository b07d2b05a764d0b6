#include "unetback/control/state_machine.hpp"

#include <array>
#include <utility>

namespace unetback::control {

namespace {

using xs_state = xenbus_state;

// The frontend still uses (or is setting up) the rings: InitWait,
// Initialised, Connected. QEMU waits for it to leave these before Closed.
bool frontend_active(xs_state f) {
  return f == xs_state::init_wait || f == xs_state::initialised || f == xs_state::connected;
}

bool frontend_closing_or_gone(xs_state f) {
  return f == xs_state::unknown || f == xs_state::closing || f == xs_state::closed;
}

// Connected/InitWait -> Closing, stopping the data path first.
vif_step to_closing(const vif_snapshot& s) {
  vif_step step{{}, xs_state::closing};
  if (s.data_connected) {
    step.actions.push_back(vif_action::disconnect);
  }
  step.actions.push_back(vif_action::write_closing);
  return step;
}

// Prefixes `actions` with disconnect when a data path runs.
vif_step stopping_first(const vif_snapshot& s, std::vector<vif_action> actions, xs_state next) {
  if (s.data_connected) {
    actions.insert(actions.begin(), vif_action::disconnect);
  }
  return {std::move(actions), next};
}

vif_step from_initialising(const vif_snapshot& s) {
  if (!s.online) {
    return stopping_first(s, {vif_action::write_closed, vif_action::destroy}, xs_state::closed);
  }
  if (s.failed || !s.backend_valid) {
    return to_closing(s);  // xenbus_dev_fatal: error node, then Closing
  }
  if (frontend_closing_or_gone(s.frontend)) {
    return stopping_first(s, {vif_action::write_closed}, xs_state::closed);
  }
  if (s.data_connected) {
    return to_closing(s);  // a data path cannot predate InitWait: reset
  }
  // docs/protocol.md §0: the TAP must exist before InitWait (the hotplug
  // script runs on InitWait and needs vif<D>.<N>).
  return {{vif_action::create_tap, vif_action::advertise_features, vif_action::write_init_wait},
          xs_state::init_wait};
}

vif_step from_init_wait(const vif_snapshot& s) {
  if (!s.online || s.failed || !s.backend_valid) {
    return to_closing(s);
  }
  if (s.frontend == xs_state::connected && s.disabled) {
    return stopping_first(s, {}, xs_state::init_wait);  // pending, data path off
  }
  if (s.frontend == xs_state::connected) {
    if (!s.data_connected) {
      return {{vif_action::connect}, xs_state::init_wait};
    }
    if (s.hotplug_connected) {
      return {{vif_action::publish_connected}, xs_state::connected};
    }
    return {{}, xs_state::init_wait};  // Connected pending hotplug-status
  }
  if (frontend_closing_or_gone(s.frontend) || s.data_connected) {
    return to_closing(s);  // closed, vanished, or reset while connected-pending
  }
  return {{}, xs_state::init_wait};
}

vif_step from_connected(const vif_snapshot& s) {
  if (!s.online || s.failed || !s.backend_valid) {
    return to_closing(s);
  }
  if (s.frontend == xs_state::connected) {
    if (s.disabled) {
      return stopping_first(s, {}, xs_state::connected);  // carrier off, state kept
    }
    // Connected without a data path (daemon restart, enable): resume from
    // the rings the frontend still holds; a failure closes (failed).
    return s.data_connected ? vif_step{{}, xs_state::connected}
                            : vif_step{{vif_action::connect}, xs_state::connected};
  }
  if (s.frontend == xs_state::reconfiguring || s.frontend == xs_state::reconfigured) {
    return {{}, xs_state::connected};  // feature-xdp-headroom is not advertised
  }
  return to_closing(s);
}

vif_step from_closing(const vif_snapshot& s) {
  if (s.data_connected) {
    return {{vif_action::disconnect}, xs_state::closing};
  }
  // Wait for the frontend to let go, and while it is Closing for it to write
  // Closed, as Linux's netback and QEMU do: a kexec or kdump kernel's
  // xenbus_reset_frontend() waits for the backend's Closing, then its Closed.
  if (s.backend_valid && (frontend_active(s.frontend) || s.frontend == xs_state::closing)) {
    return {{}, xs_state::closing};
  }
  if (!s.online) {
    return {{vif_action::write_closed, vif_action::destroy}, xs_state::closed};
  }
  return {{vif_action::write_closed}, xs_state::closed};
}

vif_step from_closed(const vif_snapshot& s) {
  if (s.data_connected) {
    return {{vif_action::disconnect}, xs_state::closed};
  }
  if (!s.online) {
    return {{vif_action::destroy}, xs_state::closed};
  }
  if (s.frontend == xs_state::initialising && s.backend_valid && !s.failed) {
    // Re-arm for a frontend that re-initialises (reboot of the driver,
    // kexec, resume); hotplug-status is kept, so Connected follows directly.
    return {{vif_action::create_tap, vif_action::write_init_wait}, xs_state::init_wait};
  }
  return {{}, xs_state::closed};
}

}  // namespace

vif_step next_step(const vif_snapshot& s) {
  if (!s.present) {
    return stopping_first(s, {vif_action::destroy}, s.backend);
  }
  switch (s.backend) {
    case xs_state::initialising:
      return from_initialising(s);
    case xs_state::init_wait:
      return from_init_wait(s);
    case xs_state::connected:
      return from_connected(s);
    case xs_state::closing:
      return from_closing(s);
    case xs_state::closed:
      return from_closed(s);
    default:
      // Unknown, Initialised, Reconfiguring, Reconfigured: never written by
      // us. Someone else (or nobody) owns the node now: stop and close.
      return to_closing(s);
  }
}

std::string_view name_of(vif_action a) {
  static constexpr std::array<std::string_view, 9> names = {
      "create_tap", "advertise_features", "write_init_wait", "connect", "publish_connected",
      "disconnect", "write_closing",      "write_closed",    "destroy"};
  return names.at(static_cast<std::size_t>(a));
}

}  // namespace unetback::control
