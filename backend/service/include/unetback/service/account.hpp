#pragma once
// The unprivileged account unetbackd runs as after setup (`user`,
// unetbackd(8)): looked up once, while the daemon is still root.

#include <sys/types.h>

#include <string>

namespace unetback::service {

/// A user of the password database, with its primary group.
struct account {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};

/// Looks `name` up (getpwnam_r). Throws std::invalid_argument naming it when
/// there is no such user, or when it is uid 0 (running as root is what the
/// switch is meant to end).
[[nodiscard]] account lookup_account(const std::string& name);

}  // namespace unetback::service
