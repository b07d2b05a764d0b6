#include "unetback/service/state_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

#include "unetback/util/private_file.hpp"

namespace unetback::service {

namespace {

uid_t owner_uid(const std::optional<account>& owner) {
  return owner ? owner->uid : ::geteuid();
}

// Gives `fd` to `owner` if it is ours and `owner` is someone else.
void hand_over(int fd, const struct stat& st, const std::optional<account>& owner,
               const std::string& what) {
  if (!owner || st.st_uid != ::geteuid() || owner->uid == ::geteuid()) {
    return;
  }
  if (::fchown(fd, owner->uid, owner->gid) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "giving " + what + " to " + owner->name);
  }
}

struct stat stat_of(int fd, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    throw std::system_error(errno, std::generic_category(), what);
  }
  return st;
}

}  // namespace

state_directory::state_directory(std::string path, const std::optional<account>& owner)
    : path_(std::move(path)) {
  open_directory(owner);
  take_lock(owner);
}

void state_directory::open_directory(const std::optional<account>& owner) {
  if (::mkdir(path_.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::system_error(errno, std::generic_category(), "state directory " + path_);
  }
  const int fd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    throw std::system_error(e, std::generic_category(),
                            "state directory " + path_ + (e == ELOOP ? " refused: a link" : ""));
  }
  struct stat st {};
  try {
    hand_over(fd, stat_of(fd, path_), owner, "state directory " + path_);
    st = stat_of(fd, path_);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (const auto problem = util::private_directory_problem(st, owner_uid(owner));
      !problem.empty()) {
    throw std::runtime_error("state directory " + path_ + " refused: " + problem);
  }
}

void state_directory::take_lock(const std::optional<account>& owner) {
  const std::string lock = path_ + "/lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "state directory lock " + lock);
  }
  hand_over(lock_fd_, stat_of(lock_fd_, lock), owner, lock);
  if (const auto problem = util::private_file_problem(stat_of(lock_fd_, lock), owner_uid(owner));
      !problem.empty()) {
    ::close(lock_fd_);
    throw std::runtime_error("state directory lock " + lock + " refused: " + problem);
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(lock_fd_);
    if (e == EWOULDBLOCK) {
      throw std::runtime_error("state directory " + path_ +
                               " is in use by another unetbackd (give each its own state-dir)");
    }
    throw std::system_error(e, std::generic_category(), "state directory lock " + lock);
  }
}

state_directory::~state_directory() {
  ::close(lock_fd_);
}

}  // namespace unetback::service
