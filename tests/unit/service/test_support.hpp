#pragma once
// Helpers for the service tests: a fake systemd notify socket and running a function in a forked
// child (capability and namespace changes must not leak into the test process).

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "unetback/test_support/temp_dir.hpp"

namespace unetback::service::test {

using test_support::temp_dir;

/// A unix datagram socket standing in for systemd's notify socket; sets
/// NOTIFY_SOCKET for the lifetime of the object.
class fake_notify_socket {
 public:
  fake_notify_socket();
  ~fake_notify_socket();
  fake_notify_socket(const fake_notify_socket&) = delete;
  fake_notify_socket& operator=(const fake_notify_socket&) = delete;

  /// The next datagram, or nullopt when none arrives within `timeout`.
  std::optional<std::string> receive(std::chrono::milliseconds timeout);
  /// How many datagrams are queued right now (drains them).
  int drain();

 private:
  temp_dir dir_;
  int fd_ = -1;
};

struct child_result {
  int exit_code = -1;  ///< exit status, or -1 if it died by a signal
  int signal = 0;      ///< the signal that killed it; 0 if it exited
  std::string output;  ///< what the child function returned
};

/// Runs `fn` in a forked child and returns its result string; exceptions become
/// "exception: <what>" with exit code 1.
child_result run_in_child(const std::function<std::string()>& fn);

/// True if this process has `cap` in its effective set.
bool have_capability(int cap);

}  // namespace unetback::service::test
