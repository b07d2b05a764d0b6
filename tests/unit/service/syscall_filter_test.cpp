// The seccomp allow-list: each test installs it in a forked child and shows what
// the kernel then does with an allowed and a forbidden system call.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>

#include "test_support.hpp"
#include "unetback/service/syscall_filter.hpp"

namespace unetback::service {
namespace {

std::string seccomp_mode_of_self() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Seccomp:", 0) == 0) {
      return line.substr(line.find_first_not_of(" \t", 8));
    }
  }
  return "?";
}

TEST(SyscallFilter, ModesParseAndAnythingElseIsRefused) {
  EXPECT_EQ(parse_syscall_filter_mode("kill"), syscall_filter_mode::kill);
  EXPECT_EQ(parse_syscall_filter_mode("log"), syscall_filter_mode::log);
  EXPECT_EQ(parse_syscall_filter_mode("off"), syscall_filter_mode::off);
  EXPECT_THROW((void)parse_syscall_filter_mode("Kill"), std::invalid_argument);
  EXPECT_THROW((void)parse_syscall_filter_mode(""), std::invalid_argument);
}

// A misspelt name would silently allow nothing: every entry must be a system
// call of this architecture (x86_64, where the daemon is built and tested).
TEST(SyscallFilter, EveryAllowedNameIsASystemCallOfThisArchitecture) {
  for (const auto name : allowed_syscalls()) {
    EXPECT_NE(seccomp_syscall_resolve_name(std::string(name).c_str()), __NR_SCMP_ERROR) << name;
  }
}

TEST(SyscallFilter, WhatAnAttackerWantsIsNotOnTheList) {
  for (const auto name : allowed_syscalls()) {
    for (const char* forbidden :
         {"execve", "execveat", "fork", "vfork", "mount", "umount2", "setuid", "setresuid", "setns",
          "unshare", "init_module", "finit_module", "kexec_load", "perf_event_open",
          "process_vm_writev", "chroot", "pivot_root", "memfd_create"}) {
      EXPECT_NE(name, forbidden);
    }
  }
}

TEST(SyscallFilter, TheFilterIsInSeccompFilterModeAndAllowedCallsWork) {
  const auto r = test::run_in_child([] {
    install_syscall_filter(syscall_filter_mode::kill);
    const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int unix_socket = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    std::string out = "seccomp=" + seccomp_mode_of_self() + "\n";
    out += fd >= 0 && unix_socket >= 0 ? "calls=ok\n" : "calls=failed\n";
    ::close(fd);
    ::close(unix_socket);
    return out;
  });
  ASSERT_EQ(r.exit_code, 0) << r.output << " signal " << r.signal;
  EXPECT_NE(r.output.find("seccomp=2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("calls=ok"), std::string::npos) << r.output;
}

void expect_killed_by_sigsys(const test::child_result& r, const char* what) {
  EXPECT_EQ(r.signal, SIGSYS) << what << ": exit " << r.exit_code << ", output " << r.output;
  EXPECT_EQ(r.output, "") << what << " returned";
}

TEST(SyscallFilter, ExecveKillsTheProcess) {
  expect_killed_by_sigsys(test::run_in_child([] {
                            install_syscall_filter(syscall_filter_mode::kill);
                            const char* argv[] = {"/bin/true", nullptr};
                            ::execv("/bin/true", const_cast<char* const*>(argv));
                            return std::string("execv returned");
                          }),
                          "execve");
}

TEST(SyscallFilter, APacketSocketKillsTheProcess) {
  expect_killed_by_sigsys(test::run_in_child([] {
                            install_syscall_filter(syscall_filter_mode::kill);
                            const int fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
                            return "socket returned " + std::to_string(fd);
                          }),
                          "socket(AF_PACKET)");
}

TEST(SyscallFilter, ExecutableMemoryKillsTheProcess) {
  expect_killed_by_sigsys(
      test::run_in_child([] {
        install_syscall_filter(syscall_filter_mode::kill);
        void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return std::string("mmap returned ") + (p == MAP_FAILED ? "MAP_FAILED" : "a mapping");
      }),
      "mmap(PROT_EXEC)");
}

// SIGSTOP and SIGCONT (job control, a debugger or strace attaching, the cgroup
// freezer) interrupt a sleeping poll(); the kernel resumes it through
// restart_syscall, which the filter must allow or the daemon dies of SIGSYS.
TEST(SyscallFilter, AStoppedAndContinuedProcessResumesItsSleep) {
  const auto r = test::run_in_child([] {
    const pid_t self = ::getpid();
    if (::fork() == 0) {  // unfiltered: stops and continues its parent mid-poll
      ::usleep(200'000);
      ::kill(self, SIGSTOP);
      ::usleep(100'000);
      ::kill(self, SIGCONT);
      ::_exit(0);
    }
    install_syscall_filter(syscall_filter_mode::kill);
    ::poll(nullptr, 0, 1000);
    return std::string("resumed");
  });
  EXPECT_EQ(r.signal, 0) << "exit " << r.exit_code << ", output " << r.output;
  EXPECT_EQ(r.output, "resumed");
}

TEST(SyscallFilter, LogModeLetsAForbiddenCallThrough) {
  const auto r = test::run_in_child([] {
    install_syscall_filter(syscall_filter_mode::log);
    const long rc = ::syscall(SYS_getpriority, 0, 0);  // not on the list
    return std::string("returned ") + (rc == -1 ? "-1" : "a priority");
  });
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.output, "returned a priority");
}

TEST(SyscallFilter, OffInstallsNothing) {
  const auto r = test::run_in_child([] {
    install_syscall_filter(syscall_filter_mode::off);
    return "seccomp=" + seccomp_mode_of_self();
  });
  EXPECT_EQ(r.output, "seccomp=0");
}

}  // namespace
}  // namespace unetback::service
