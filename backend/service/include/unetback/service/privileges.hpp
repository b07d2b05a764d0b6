#pragma once
// Least privilege for unetbackd: once setup is done (XenStore connected, control
// socket bound, event loop built) the daemon keeps only the capabilities its
// steady state needs, in its effective, permitted and bounding sets, and sets
// no_new_privs. Given an account (`user`, unetbackd(8)), it also leaves uid 0 for
// that user, its primary group and its supplementary groups: a memory-safety
// bug then holds no root-owned file, no D-Bus or systemd privilege. The user
// reaches /dev/xen/{gntdev,evtchn,xenbus} through a group (the package's udev
// rule gives the `unetback` group rw on them), never through CAP_DAC_OVERRIDE.
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

#include "unetback/service/account.hpp"

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
/// With `run_as`, the process then switches its uids, gids and supplementary
/// groups to that account's, keeping `keep` across the switch (PR_SET_KEEPCAPS);
/// that needs CAP_SETUID and CAP_SETGID, which are not kept afterwards.
///
/// Capabilities are per thread: call it before starting any thread. Returns the
/// effective set afterwards as text ("net_admin", "none") for the log. Throws
/// std::logic_error when more than one thread exists, std::runtime_error when the
/// kernel refuses a change or `run_as` is given without the capabilities to switch.
std::string drop_privileges(std::span<const int> keep = daemon_capabilities,
                            const account* run_as = nullptr);

}  // namespace unetback::service
