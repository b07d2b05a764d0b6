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

state_directory::state_directory(std::string path) : path_(std::move(path)) {
  if (::mkdir(path_.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::system_error(errno, std::generic_category(), "state directory " + path_);
  }
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0) {
    throw std::system_error(errno, std::generic_category(), "state directory " + path_);
  }
  if (const std::string problem = util::private_directory_problem(st); !problem.empty()) {
    throw std::runtime_error("state directory " + path_ + " refused: " + problem);
  }
  const std::string lock = path_ + "/lock";
  lock_fd_ = util::open_private_file(lock, O_RDWR | O_CREAT);
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
