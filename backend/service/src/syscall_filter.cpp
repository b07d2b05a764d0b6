#include "unetback/service/syscall_filter.hpp"

#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <array>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace unetback::service {

namespace {

// Allowed without conditions. Grouped by what needs them; mmap, mprotect and
// socket are added below with conditions on their arguments.
constexpr std::string_view steady_state[] = {
    // memory (glibc malloc, thread stacks)
    "brk",
    "munmap",
    "mremap",
    "madvise",
    // files and fds: TAP, gntdev, evtchn, state files, /proc and /sys reads
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "lseek",
    "close",
    "open",
    "openat",
    "fstat",
    "newfstatat",
    "stat",
    "lstat",
    "statx",
    "fcntl",
    "ioctl",
    "dup",
    "dup2",
    "dup3",
    "pipe2",
    "getdents64",
    "readlink",
    "readlinkat",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "ftruncate",
    "fsync",
    "fdatasync",
    "flock",
    "access",
    "faccessat",
    "faccessat2",
    "fchmod",
    "umask",
    // events: Boost.Asio's reactor, the workers' waits, timers
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "poll",
    "ppoll",
    "select",
    "pselect6",
    "eventfd2",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    // sockets (socket itself: below): XenStore, control socket, netlink, journald
    "socketpair",
    "bind",
    "listen",
    "accept",
    "accept4",
    "connect",
    "shutdown",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "getsockopt",
    "setsockopt",
    "getsockname",
    "getpeername",
    // signals
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "sigaltstack",
    // a sleep interrupted by SIGSTOP/SIGCONT (job control, ptrace attach, the
    // cgroup freezer) resumes through it; it only restarts an allowed call
    "restart_syscall",
    "tgkill",
    "kill",
    // threads
    "clone",
    "clone3",
    "futex",
    "set_robust_list",
    "get_robust_list",
    "rseq",
    "set_tid_address",
    "exit",
    "exit_group",
    "sched_yield",
    "sched_getaffinity",
    "sched_setaffinity",
    "prctl",
    "membarrier",
    // time
    "clock_gettime",
    "clock_getres",
    "clock_nanosleep",
    "nanosleep",
    "gettimeofday",
    "time",
    // identity and limits, as libraries ask for them
    "getpid",
    "gettid",
    "getppid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    "capget",
    "getrlimit",
    "prlimit64",
    "getrusage",
    "uname",
    "sysinfo",
    "getcwd",
    "getrandom",
    // the RX steering map: updates through the map's fd (docs/security.md)
    "bpf",
};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNETBACK_SANITIZER_RUNTIME 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNETBACK_SANITIZER_RUNTIME 1
#endif
#endif

#ifdef UNETBACK_SANITIZER_RUNTIME
// LeakSanitizer stops the world at exit from a tracer task (clone, ptrace,
// wait4, getdents on /proc/self/task); ASan maps its shadow and reads
// /proc/self/maps. Test builds only.
constexpr std::string_view sanitizer_runtime[] = {"ptrace",  "wait4",   "waitid", "getdents",
                                                  "mincore", "munlock", "mlock",  "sched_getparam"};
#else
constexpr std::array<std::string_view, 0> sanitizer_runtime{};
#endif

constexpr auto all_allowed = [] {
  constexpr std::size_t n = std::size(steady_state) + std::size(sanitizer_runtime);
  std::array<std::string_view, n> out{};
  std::size_t i = 0;
  for (const auto name : steady_state) {
    out[i++] = name;
  }
  for (const auto name : sanitizer_runtime) {
    out[i++] = name;
  }
  return out;
}();

// Address families of socket(2): XenStore and the control socket (AF_UNIX),
// link changes (AF_NETLINK), interface ioctls and the metrics listener
// (AF_INET, AF_INET6). No AF_PACKET: frames move through the TAP.
constexpr std::array<int, 4> socket_families{AF_UNIX, AF_NETLINK, AF_INET, AF_INET6};

using filter = std::unique_ptr<void, decltype(&seccomp_release)>;

void check_seccomp(int rc, const std::string& what) {
  if (rc < 0) {
    throw std::runtime_error("seccomp: " + what + ": " + std::strerror(-rc));
  }
}

void allow(const filter& f, int nr, const std::string& name) {
  check_seccomp(seccomp_rule_add(f.get(), SCMP_ACT_ALLOW, nr, 0), "allowing " + name);
}

// No executable memory: mmap and mprotect only without PROT_EXEC.
void allow_without_exec(const filter& f, int nr, const char* name) {
  check_seccomp(
      seccomp_rule_add(
          f.get(), SCMP_ACT_ALLOW, nr, 1,
          scmp_arg_cmp{.arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = PROT_EXEC, .datum_b = 0}),
      std::string("allowing ") + name);
}

void allow_socket_families(const filter& f) {
  for (const int family : socket_families) {
    check_seccomp(seccomp_rule_add(f.get(), SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
                                   scmp_arg_cmp{.arg = 0,
                                                .op = SCMP_CMP_EQ,
                                                .datum_a = static_cast<scmp_datum_t>(family),
                                                .datum_b = 0}),
                  "allowing socket family " + std::to_string(family));
  }
}

}  // namespace

syscall_filter_mode parse_syscall_filter_mode(std::string_view text) {
  if (text == "off") {
    return syscall_filter_mode::off;
  }
  if (text == "log") {
    return syscall_filter_mode::log;
  }
  if (text == "kill") {
    return syscall_filter_mode::kill;
  }
  throw std::invalid_argument("\"" + std::string(text) + "\" is not one of off, log, kill");
}

std::span<const std::string_view> allowed_syscalls() {
  return all_allowed;
}

void install_syscall_filter(syscall_filter_mode mode) {
  if (mode == syscall_filter_mode::off) {
    return;
  }
  const std::uint32_t other =
      mode == syscall_filter_mode::kill ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_LOG;
  const filter f(seccomp_init(other), &seccomp_release);
  if (!f) {
    throw std::runtime_error("seccomp: seccomp_init failed");
  }
  for (const auto name : all_allowed) {
    const std::string text(name);
    const int nr = seccomp_syscall_resolve_name(text.c_str());
    if (nr != __NR_SCMP_ERROR) {  // a name this architecture lacks
      allow(f, nr, text);
    }
  }
  allow_without_exec(f, SCMP_SYS(mmap), "mmap");
  allow_without_exec(f, SCMP_SYS(mprotect), "mprotect");
  allow_socket_families(f);
  check_seccomp(seccomp_load(f.get()), "loading the filter");
}

}  // namespace unetback::service
