#pragma once
// The daemon's state directory (state-dir, default /run/unetback): what a
// restarted unetbackd carries over from its predecessor (queue response
// journals and counters, the guests' hash configurations). It must be a
// tmpfs: the state is only valid while the guests' rings are. One daemon per
// directory: an exclusive lock on <dir>/lock, held for the process's life
// (released by the kernel even on kill -9), so two daemons never share it.
// A daemon that runs as another user after setup (`user`) opens it while still
// root and hands it (and the lock) to that user: the user writes its files.

#include <optional>
#include <string>

#include "unetback/service/account.hpp"

namespace unetback::service {

class state_directory {
 public:
  /// Creates `path` (0700) if missing and takes its lock. With `owner`, what is
  /// still ours (a directory or lock just created, or left by a root daemon) is
  /// given to `owner`, and `owner`, not we, must own it. Throws
  /// std::system_error, or std::runtime_error naming the problem ("in use by
  /// another unetbackd"; a link, someone else's directory, or one that group
  /// or others may write: util/private_file.hpp).
  explicit state_directory(std::string path, const std::optional<account>& owner = std::nullopt);
  ~state_directory();
  state_directory(const state_directory&) = delete;
  state_directory& operator=(const state_directory&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  void open_directory(const std::optional<account>& owner);
  void take_lock(const std::optional<account>& owner);

  std::string path_;
  int lock_fd_ = -1;
};

}  // namespace unetback::service
