#pragma once
// The vif's xenbus state machine as a pure function: from what XenStore says
// now (our backend state, the frontend state, online, hotplug-status) and
// what the vif holds (data path running, a failure pending), the next step.
// The vif applies the step's actions in order, re-reads, and asks again until
// nothing is left to do. Every step is one edge of Linux netback's
// set_backend_state() graph, so a far target is reached along its shortest
// path (e.g. Connected -> Closing -> Closed -> InitWait on a frontend reset):
//
//              create TAP, features
//   Initialising ------------------> InitWait --(frontend Connected: connect;
//        |                             |  ^        hotplug-status "connected":
//        | frontend gone/closing       |  |        publish)--> Connected
//        v                             v  | frontend              |
//      Closed <---------------------- Closing                     |
//        |  ^   frontend not active      ^   re-initialises       |
//        |  |   (not 2/3/4): write 6     |   (from Closed)        |
//        |  +------------------------------------------------------+
//        |        frontend closing/closed/reset, online=0, failure:
//        |        disconnect first, then Closing
//        +-- online=0: destroy (remove TAP, drop hotplug-status)
//
// Backend Closing covers both our own error path and the toolstack writing
// state=5 (xl network-detach / destroy, QEMU xen_device_backend_changed): the
// data path stops at once, and Closed follows as soon as the frontend is not
// active (Unknown, Initialising, Closing, Closed), so a vanished frontend
// (domain destroy) does not hold up libxl's 10 s wait.
// Connected is published only once hotplug-status is "connected" (the
// script has put the TAP on its bridge); until then the vif is "Connected
// pending" in InitWait with its data path running.
// Connected without a data path while the frontend is Connected (a daemon
// restart, or `unetbackctl enable`) resumes: connect again from the grant
// refs and ports in XenStore, the state never leaving Connected. Only when
// that fails does the vif close (the failure path). A vif disabled by the
// operator keeps its state (Connected, or InitWait pending) with the data
// path stopped, like Linux netback's carrier-off `disabled` vif.
// Destroy happens only when the backend directory is gone, or online=0 and
// the state is Closed (§1.10); a vif stays in Closed while online=1 and
// re-arms when its frontend re-initialises (hotplug-status untouched).

#include <cstdint>
#include <string>
#include <vector>

#include "unetback/control/xenbus_state.hpp"

namespace unetback::control {

/// What the state machine looks at.
struct vif_snapshot {
  bool present = true;                            ///< backend directory exists
  xenbus_state backend = xenbus_state::unknown;   ///< our `state` node as read now
  xenbus_state frontend = xenbus_state::unknown;  ///< frontend `state` (unknown: gone)
  bool online = true;                             ///< backend `online` == "1"
  bool hotplug_connected = false;  ///< `hotplug-status` == "connected" (or not awaited)
  bool backend_valid = true;       ///< backend keys passed validation
  bool data_connected = false;     ///< queues are running
  bool failed =
      false;  ///< a connect error or data-path fault; cleared when the frontend re-initialises
  bool disabled = false;  ///< `unetbackctl disable`: keep the state, stop the data path
};

/// Side effects, executed in the order listed in a step.
enum class vif_action : std::uint8_t {
  create_tap,          ///< create/attach the TAP vif<D>.<N> (before InitWait)
  advertise_features,  ///< feature keys, one transaction
  write_init_wait,     ///< state = 2
  connect,             ///< read frontend keys, open TAP queues, start (or resume) the data path
  publish_connected,   ///< state = 4
  disconnect,          ///< stop queues (join), unbind, unmap; log counters
  write_closing,       ///< state = 5
  write_closed,        ///< state = 6
  destroy,             ///< remove the TAP, drop watches, forget the vif
};

/// One step: the actions, and the state they leave the backend in.
struct vif_step {
  std::vector<vif_action> actions;  ///< empty: nothing to do until something changes
  xenbus_state next = xenbus_state::unknown;
};

/// The next step from `s`. Pure and total: defined for every input.
[[nodiscard]] vif_step next_step(const vif_snapshot& s);

/// For logs: "disconnect".
[[nodiscard]] std::string_view name_of(vif_action a);

}  // namespace unetback::control
