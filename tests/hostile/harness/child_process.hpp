#pragma once
// Child processes of the hostile tier (sim-xenstored, unetbackd, netfront-sim,
// sim-xl, ip): fork + exec with stdout/stderr sent to a log file, and a
// bounded SIGTERM-then-SIGKILL teardown. Safe to use while the test process
// runs other threads (everything exec needs is built before fork).

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace unetback::hostile {

class child_process {
 public:
  /// Starts `argv` (argv[0] searched in PATH) with `extra_env` ("K=V") added
  /// to the environment; output goes to `log` (appended). Throws
  /// std::system_error if fork fails.
  child_process(const std::vector<std::string>& argv, const std::filesystem::path& log,
                const std::vector<std::string>& extra_env = {});
  /// Terminates the child if it still runs.
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  /// True while the child has not exited (reaps it when it has).
  [[nodiscard]] bool alive();
  /// The wait status once the child exited (see WIFEXITED...).
  [[nodiscard]] std::optional<int> wait_status() const { return status_; }
  /// Waits up to `timeout` for the child to exit; its wait status, or nullopt.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  /// SIGTERM, up to `grace` to exit, then SIGKILL. Returns the wait status.
  int terminate(std::chrono::milliseconds grace = std::chrono::seconds(10));

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

/// Runs `argv` to completion (at most `timeout`, then SIGKILL); output is
/// appended to `log`. Returns the exit code, or -1 if killed by a signal or
/// timed out.
int run_command(const std::vector<std::string>& argv, const std::filesystem::path& log,
                std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// Runs `argv` and returns its stdout (stderr goes to `log`); nullopt on a
/// non-zero exit or timeout.
std::optional<std::string> capture_command(
    const std::vector<std::string>& argv, const std::filesystem::path& log,
    std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace unetback::hostile
