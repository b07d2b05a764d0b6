#include "hotplug.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace unetback::toolstack {

namespace {

constexpr std::chrono::seconds hotplug_timeout{40};  // LIBXL_HOTPLUG_TIMEOUT

// A driver domain runs its own hotplug scripts (`xl devd` there), talking to
// XenStore as that domain, so XENBUS_PATH (relative) resolves below its home:
// in the simulation, the domain's own socket next to the privileged one.
void use_backend_domains_xenstore(const vif_spec& spec) {
  const char* privileged = std::getenv("XENSTORED_PATH");
  if (spec.backend.value() == 0 || privileged == nullptr) {
    return;
  }
  const auto own = std::filesystem::path(privileged).parent_path() /
                   fmt::format("socket.d{}", spec.backend.value());
  ::setenv("XENSTORED_PATH", own.c_str(), 1);
}

[[noreturn]] void exec_script(const vif_spec& spec, const std::string& action) {
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) {
    ::dup2(devnull, STDIN_FILENO);
  }
  ::setenv("script", spec.script.c_str(), 1);
  use_backend_domains_xenstore(spec);
  ::setenv("XENBUS_TYPE", "vif", 1);
  const auto path = fmt::format("backend/vif/{}/{}", spec.guest.value(), spec.devid);
  ::setenv("XENBUS_PATH", path.c_str(), 1);
  ::setenv("XENBUS_BASE_PATH", "backend", 1);
  ::setenv("netdev", "", 1);
  const auto vif = fmt::format("vif{}.{}", spec.guest.value(), spec.devid);
  ::setenv("vif", vif.c_str(), 1);
  ::execl(spec.script.c_str(), spec.script.c_str(), action.c_str(), "type_if=vif", nullptr);
  ::_exit(127);
}

}  // namespace

int run_hotplug_script(const vif_spec& spec, const std::string& action) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    return -1;
  }
  if (pid == 0) {
    exec_script(spec, action);
  }
  const auto deadline = std::chrono::steady_clock::now() + hotplug_timeout;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace unetback::toolstack
