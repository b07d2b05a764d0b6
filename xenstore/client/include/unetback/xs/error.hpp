#pragma once
// Errors of XenStore operations: a std::system_error that names the node.

#include <string>
#include <string_view>
#include <system_error>

namespace unetback::xs {

/// A failed XenStore operation. code() holds the errno xenstored answered
/// (ENOENT, EACCES, EAGAIN, EINVAL...); what() names the operation and path.
class error : public std::system_error {
 public:
  /// `errnum`: an errno value; `operation`: e.g. "write"; `path`: the node.
  error(int errnum, std::string_view operation, std::string_view path);

  /// The node (or other subject, e.g. "transaction") the operation was on.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// Throws xs::error built from the current errno (0 is reported as EIO,
/// since libxenstore sometimes fails without setting errno).
[[noreturn]] void throw_errno(std::string_view operation, std::string_view path);

}  // namespace unetback::xs
