#pragma once
// A private directory for one test (mkdtemp), removed with its contents when
// the object goes. Sockets of the sim live in such directories, and a unix
// socket path must stay under 108 bytes: keep prefixes short.

#include <filesystem>
#include <string>

namespace unetback::test_support {

class temp_dir {
 public:
  /// Creates /tmp/<prefix>XXXXXX. Throws std::system_error if it cannot.
  explicit temp_dir(const std::string& prefix = "unetback-test.");
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  /// Leaves the directory in place when the object goes (a post-mortem).
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace unetback::test_support
