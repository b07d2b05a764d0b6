// unetbackd as systemd runs it (unetbackd.service: Type=notify, WatchdogSec=,
// KillSignal=SIGTERM), driven against sim-xenstored: the daemon announces READY
// with a status, pings the watchdog at half of WATCHDOG_USEC, announces STOPPING
// and exits 0 on SIGTERM; with the kernel netback present it refuses to start with
// exit status 3 (RestartPreventExitStatus=) before it announces anything.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "unetback/test_support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// fork + exec `argv` with `env` added, stdout/stderr to `log`; `before_exec`
// runs in the child (e.g. to set up a mount namespace).
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
            const fs::path& log, void (*before_exec)() = nullptr) {
  const pid_t pid = ::fork();
  if (pid != 0) {
    return pid;
  }
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(fd, STDOUT_FILENO);
  ::dup2(fd, STDERR_FILENO);
  for (const auto& e : env) {
    ::putenv(const_cast<char*>(e.c_str()));
  }
  if (before_exec != nullptr) {
    before_exec();
  }
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  ::_exit(127);
}

std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

class ServiceProtocol : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bin = std::getenv("UNETBACK_BIN");
    ASSERT_NE(bin, nullptr) << "UNETBACK_BIN not set";
    bin_ = bin;
    fs::create_directories(dir_ / "xs");
    fs::create_directories(dir_ / "sim");
    std::ofstream(dir_ / "unetback.toml") << "[daemon]\n";
    notify_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const auto path = (dir_ / "notify").string();
    std::strcpy(addr.sun_path, path.c_str());
    ASSERT_EQ(::bind(notify_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);
  }

  void TearDown() override {
    for (const pid_t pid : {daemon_, xenstored_}) {
      if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
    ::close(notify_);
  }

  void start_xenstored() {
    xenstored_ = spawn({(bin_ / "sim-xenstored").string(), "--dir", (dir_ / "xs").string()}, {},
                       dir_ / "xenstored.log");
    for (int i = 0; i < 500 && !fs::exists(dir_ / "xs/socket"); ++i) {
      std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(fs::exists(dir_ / "xs/socket")) << read_file(dir_ / "xenstored.log");
  }

  std::vector<std::string> daemon_argv(const std::string& platform) const {
    return {(bin_ / "unetbackd").string(),
            "--platform",
            platform,
            "--config",
            (dir_ / "unetback.toml").string(),
            "--sim-dir",
            (dir_ / "sim").string(),
            "--xenstore",
            (dir_ / "xs/socket").string(),
            "--state-dir",
            (dir_ / "state").string(),
            "--log-target",
            "stderr"};
  }

  std::vector<std::string> systemd_env() const {
    return {"NOTIFY_SOCKET=" + (dir_ / "notify").string(), "WATCHDOG_USEC=400000"};
  }

  std::optional<std::string> receive(std::chrono::milliseconds timeout) const {
    pollfd p{notify_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) {
      return std::nullopt;
    }
    char buf[4096];
    const auto n = ::recv(notify_, buf, sizeof(buf), 0);
    return n < 0 ? std::nullopt : std::optional<std::string>(std::string(buf, std::size_t(n)));
  }

  // The next notification that is not a watchdog ping (counting those).
  std::optional<std::string> next_state(std::chrono::milliseconds timeout, int& pings) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      auto msg = receive(left);
      if (msg && *msg == "WATCHDOG=1") {
        ++pings;
      } else if (msg) {
        return msg;
      }
    }
    return std::nullopt;
  }

  fs::path bin_;
  unetback::test_support::temp_dir tmp_{"unetback-svc-proto."};
  fs::path dir_ = tmp_.path();
  int notify_ = -1;
  pid_t xenstored_ = -1;
  pid_t daemon_ = -1;
};

TEST_F(ServiceProtocol, ReadyWatchdogStoppingAndCleanExitOnSigterm) {
  start_xenstored();
  daemon_ = spawn(daemon_argv("sim"), systemd_env(), dir_ / "unetbackd.log");
  int pings = 0;
  EXPECT_EQ(next_state(20s, pings), "READY=1\nSTATUS=serving 0 vifs")
      << read_file(dir_ / "unetbackd.log");
  std::this_thread::sleep_for(700ms);  // WatchdogSec 0.4 s: a ping every 0.2 s
  ASSERT_EQ(::kill(daemon_, SIGTERM), 0);
  const auto stopping = next_state(10s, pings);
  ASSERT_TRUE(stopping.has_value()) << read_file(dir_ / "unetbackd.log");
  EXPECT_EQ(stopping->rfind("STOPPING=1", 0), 0U) << *stopping;
  EXPECT_GE(pings, 3);
  EXPECT_EQ(wait_exit(daemon_, 10s), 0) << read_file(dir_ / "unetbackd.log");
  daemon_ = -1;
}

void fake_loaded_netback() {
  // Private mount namespace: /sys/module shows a loaded xen_netback.
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", "/sys/module", "tmpfs", 0, "mode=0755") != 0 ||
      ::mkdir("/sys/module/xen_netback", 0755) != 0) {
    ::_exit(126);
  }
}

TEST_F(ServiceProtocol, KernelNetbackPresentIsRefusedWithStatus3BeforeReady) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root for a private mount namespace";
  }
  daemon_ = spawn(daemon_argv("xen"), systemd_env(), dir_ / "unetbackd.log", fake_loaded_netback);
  const auto status = wait_exit(daemon_, 10s);
  daemon_ = -1;
  const auto log = read_file(dir_ / "unetbackd.log");
  ASSERT_NE(status, std::optional<int>(126)) << "could not fake /sys/module";
  EXPECT_EQ(status, 3) << log;
  EXPECT_NE(log.find("xen-netback module is loaded"), std::string::npos) << log;
  int pings = 0;
  EXPECT_EQ(next_state(100ms, pings), std::nullopt) << "no READY from a refused start";
}

TEST_F(ServiceProtocol, BadConfigurationExitsWithStatus2NamingTheKey) {
  std::ofstream(dir_ / "unetback.toml") << "[daemon]\nmax-queus = 4\n";
  daemon_ = spawn(daemon_argv("sim"), systemd_env(), dir_ / "unetbackd.log");
  const auto status = wait_exit(daemon_, 10s);
  daemon_ = -1;
  const auto log = read_file(dir_ / "unetbackd.log");
  EXPECT_EQ(status, 2) << log;
  EXPECT_NE(log.find("max-queus"), std::string::npos) << log;
}

}  // namespace
