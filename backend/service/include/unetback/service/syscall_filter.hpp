#pragma once
// unetbackd's seccomp allow-list (`seccomp`, unetbackd(8)): installed after
// setup, before any thread starts, so every thread inherits it. The list is
// what the steady state uses (docs/security.md, "Containment"): memory, files
// and ioctls on fds (TAP, gntdev, evtchn), sockets (XenStore, the control
// socket, netlink, interface ioctls), epoll/eventfd/timerfd, threads, bpf (the
// steering map). Whatever else a compromised daemon would need to get further
// (execve, ptrace, mount, setuid, module loading, namespaces, kexec,
// perf_event_open, process_vm_writev, ...) is not on it.

#include <span>
#include <string_view>

namespace unetback::service {

/// What a system call outside the list does.
enum class syscall_filter_mode {
  off,   ///< no filter
  log,   ///< allowed, and logged by the kernel (finding a missing entry)
  kill,  ///< the process is killed with SIGSYS (the default)
};

/// "off" | "log" | "kill"; throws std::invalid_argument saying what is allowed.
[[nodiscard]] syscall_filter_mode parse_syscall_filter_mode(std::string_view text);

/// The names of the allowed system calls (a sanitizer build adds what its
/// runtime needs: see the source).
[[nodiscard]] std::span<const std::string_view> allowed_syscalls();

/// Installs the filter for this thread and the threads it starts later (sets
/// no_new_privs). Throws std::runtime_error when libseccomp or the kernel
/// refuses it.
void install_syscall_filter(syscall_filter_mode mode);

}  // namespace unetback::service
