#pragma once
// Entering a named network namespace (/run/netns/NAME, as `ip netns add`
// creates it) on the calling thread only, and coming back.

#include <string_view>

#include "unetback/tap/unique_fd.hpp"

namespace unetback::tap {

/// An open namespace file descriptor (closed on destruction).
class netns_handle {
 public:
  /// Opens /run/netns/<name>. Throws std::system_error if it does not exist.
  static netns_handle open_named(std::string_view name);
  /// Opens the calling thread's current network namespace.
  static netns_handle open_current();

  [[nodiscard]] int fd() const { return fd_.get(); }

 private:
  explicit netns_handle(int fd) : fd_(fd) {}
  unique_fd fd_;
};

/// While alive, the calling thread is in `target`'s network namespace
/// (setns(CLONE_NEWNET) affects this thread only); the destructor returns it
/// to the namespace it was in. Throws std::system_error if setns fails.
class netns_scope {
 public:
  explicit netns_scope(const netns_handle& target);
  ~netns_scope();
  netns_scope(const netns_scope&) = delete;
  netns_scope& operator=(const netns_scope&) = delete;

 private:
  netns_handle saved_;
};

}  // namespace unetback::tap
