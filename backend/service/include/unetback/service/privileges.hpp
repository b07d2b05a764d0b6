#pragma once
// Least privilege for unetbackd: once setup is done (XenStore connected, control
// socket bound, event loop built) the daemon keeps only the capabilities its
// steady state needs, in its effective, permitted and bounding sets, and sets
// no_new_privs. It keeps running as uid 0: /dev/xen/{gntdev,evtchn,xenbus}, the
// xenstored socket and /run are root-owned 0600/0755, so ownership, not
// CAP_DAC_OVERRIDE, grants access to them.
//
// What is kept, and why:
// * CAP_NET_ADMIN: every vif that appears later needs TUNSETIFF (create the
//   multi-queue TAP vif<domid>.<devid>), TUNSETQUEUE (attach one fd per queue) and
//   SIOCSIFFLAGS/SIOCSIFMTU/SIOCSIFHWADDR on it; the tun driver and the netdev ioctls
//   check CAP_NET_ADMIN for each.
// Not kept: CAP_SYS_ADMIN (no mount/setns in production), CAP_DAC_OVERRIDE (see
// above), CAP_SYS_NICE / CAP_IPC_LOCK (no realtime scheduling or mlock; raise
// LimitMEMLOCK/LimitNOFILE in the unit instead), CAP_SETPCAP (needed only for this
// drop itself), CAP_NET_RAW (no packet sockets: frames move through the TAP).

#include <linux/capability.h>

#include <array>
#include <span>
#include <string>

namespace unetback::service {

/// The capabilities unetbackd keeps after setup (see the file comment).
inline constexpr std::array<int, 1> daemon_capabilities{CAP_NET_ADMIN};

/// Reduces the process to `keep` (each kept only if currently permitted): the
/// effective, permitted and bounding sets become `keep`, inheritable and ambient
/// become empty, and no_new_privs is set. The bounding set is shrunk with
/// PR_CAPBSET_DROP, which needs CAP_SETPCAP; without it the call succeeds only if
/// the bounding set already is within `keep` (as under unetbackd.service's
/// CapabilityBoundingSet=). A process without capabilities (an unprivileged
/// simulation run) only gets no_new_privs.
///
/// Capabilities are per thread: call it before starting any thread. Returns the
/// effective set afterwards as text ("net_admin", "none") for the log. Throws
/// std::logic_error when more than one thread exists, std::runtime_error when the
/// kernel refuses a change.
std::string drop_privileges(std::span<const int> keep = daemon_capabilities);

}  // namespace unetback::service
