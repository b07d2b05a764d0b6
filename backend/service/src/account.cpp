#include "unetback/service/account.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace unetback::service {

account lookup_account(const std::string& name) {
  const long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buffer(hint > 0 ? static_cast<std::size_t>(hint) : 16384U);
  struct passwd entry {};
  struct passwd* found = nullptr;
  const int rc = ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (rc != 0) {
    throw std::invalid_argument("user " + name + ": " + std::strerror(rc));
  }
  if (found == nullptr) {
    throw std::invalid_argument("user " + name + ": no such user");
  }
  if (found->pw_uid == 0) {
    throw std::invalid_argument("user " + name + " is uid 0: name an unprivileged user");
  }
  return account{name, found->pw_uid, found->pw_gid};
}

}  // namespace unetback::service
