#include "unetback/xs/error.hpp"

#include <cerrno>
#include <string>

namespace unetback::xs {

namespace {

std::string describe(std::string_view operation, std::string_view path) {
  std::string msg = "xenstore ";
  msg.append(operation);
  msg.append(" ");
  msg.append(path);
  return msg;
}

}  // namespace

error::error(int errnum, std::string_view operation, std::string_view path)
    : std::system_error(errnum, std::generic_category(), describe(operation, path)), path_(path) {}

void throw_errno(std::string_view operation, std::string_view path) {
  const int saved = errno;
  throw error(saved == 0 ? EIO : saved, operation, path);
}

}  // namespace unetback::xs
