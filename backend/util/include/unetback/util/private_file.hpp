#pragma once
// Files and directories of the daemon's state directory (docs/reliability.md):
// what a restarted daemon reads back goes into guests' rings and steering, so
// it must be what this daemon's user wrote. A file is used only if it is a
// regular file, not reached through a symbolic link (O_NOFOLLOW), owned by
// our effective uid, with one link (no hard link to a file of someone else),
// and neither readable nor writable by group or others; the directory must
// be ours and not writable by group or others (nobody else can replace its
// files). Anything else is refused with the reason.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include <fmt/format.h>

namespace unetback::util {

/// Why `st` (a file or directory) is not `owner`'s (by default ours), or what
/// group or others may do with it beyond `allowed` permission bits; "" when nothing.
[[nodiscard]] inline std::string ownership_problem(const struct stat& st, mode_t allowed,
                                                   uid_t owner = ::geteuid()) {
  if (st.st_uid != owner) {
    return fmt::format("owned by uid {}, not {}", st.st_uid, owner);
  }
  if ((st.st_mode & 077 & ~allowed) != 0) {
    return fmt::format("mode {:04o}: group or others may {}", st.st_mode & 07777,
                       allowed == 0 ? "use it" : "write it");
  }
  return {};
}

/// Why `st` is not a file only `owner` (by default we) could have written; ""
/// when it is.
[[nodiscard]] inline std::string private_file_problem(const struct stat& st,
                                                      uid_t owner = ::geteuid()) {
  if (!S_ISREG(st.st_mode)) {
    return "not a regular file";
  }
  if (std::string problem = ownership_problem(st, 0, owner); !problem.empty()) {
    return problem;
  }
  if (st.st_nlink != 1) {
    return fmt::format("{} hard links", st.st_nlink);
  }
  return {};
}

/// Why `st` is not a directory only `owner` (by default we) may change; "" when
/// it is.
[[nodiscard]] inline std::string private_directory_problem(const struct stat& st,
                                                           uid_t owner = ::geteuid()) {
  if (!S_ISDIR(st.st_mode)) {
    return "not a directory";
  }
  return ownership_problem(st, 055, owner);  // group and others may read and enter it
}

/// open(2) with O_NOFOLLOW and O_CLOEXEC (and mode 0600 for O_CREAT), then
/// the private_file_problem() checks. Returns the fd; throws
/// std::system_error naming `path` and the reason (ELOOP for a link,
/// EPERM for a file that is not private).
[[nodiscard]] inline int open_private_file(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw std::system_error(errno, std::generic_category(), path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::system_error(e, std::generic_category(), path);
  }
  if (const std::string problem = private_file_problem(st); !problem.empty()) {
    ::close(fd);
    throw std::system_error(EPERM, std::generic_category(), path + " refused: " + problem);
  }
  return fd;
}

}  // namespace unetback::util
