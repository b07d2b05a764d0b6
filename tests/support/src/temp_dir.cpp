#include "unetback/test_support/temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <system_error>

namespace unetback::test_support {

temp_dir::temp_dir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + tmpl);
  }
  path_ = tmpl;
}

temp_dir::~temp_dir() {
  if (keep_) {
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace unetback::test_support
