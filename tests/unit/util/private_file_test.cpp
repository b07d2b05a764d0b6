// What the state directory accepts as a file only the daemon wrote.

#include "unetback/util/private_file.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <system_error>

namespace unetback::util {
namespace {

class PrivateFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/unetback-private-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)std::system(("rm -rf " + dir_).c_str()); }
  std::string file(const std::string& name, mode_t mode = 0600) {
    const std::string p = dir_ + "/" + name;
    std::ofstream(p) << "x";
    EXPECT_EQ(::chmod(p.c_str(), mode), 0);
    return p;
  }
  /// The errno and message open_private_file throws for `path`; 0 when it opens.
  std::pair<int, std::string> refusal(const std::string& path) {
    try {
      ::close(open_private_file(path, O_RDONLY));
      return {0, ""};
    } catch (const std::system_error& e) {
      return {e.code().value(), e.what()};
    }
  }
  std::string dir_;
};

TEST_F(PrivateFile, OursWithMode0600Opens) {
  EXPECT_EQ(refusal(file("ok")).first, 0);
}

TEST_F(PrivateFile, CreatesWithMode0600) {
  const std::string p = dir_ + "/new";
  ::close(open_private_file(p, O_RDWR | O_CREAT));
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
}

TEST_F(PrivateFile, ASymbolicLinkIsNotFollowed) {
  const std::string target = file("target");
  const std::string link = dir_ + "/link";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_EQ(refusal(link).first, ELOOP);
}

TEST_F(PrivateFile, AFileGroupOrOthersMayReadOrWriteIsRefused) {
  for (const mode_t mode : {0640U, 0604U, 0660U, 0666U}) {
    const auto [code, what] = refusal(file("m" + std::to_string(mode), mode));
    EXPECT_EQ(code, EPERM) << std::oct << mode;
    EXPECT_NE(what.find("group or others"), std::string::npos) << what;
  }
}

TEST_F(PrivateFile, AHardLinkIsRefused) {
  const std::string p = file("linked");
  ASSERT_EQ(::link(p.c_str(), (dir_ + "/second").c_str()), 0);
  const auto [code, what] = refusal(p);
  EXPECT_EQ(code, EPERM);
  EXPECT_NE(what.find("2 hard links"), std::string::npos) << what;
}

TEST_F(PrivateFile, SomeoneElsesFileIsRefused) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "giving a file away needs root (the unit tier runs as root in CI)";
  }
  const std::string p = file("theirs");
  ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0);
  const auto [code, what] = refusal(p);
  EXPECT_EQ(code, EPERM);
  EXPECT_NE(what.find("owned by uid 65534"), std::string::npos) << what;
}

TEST_F(PrivateFile, ADirectoryIsNotAFile) {
  EXPECT_NE(refusal(dir_).first, 0);
}

TEST(PrivateDirectory, OursWithoutGroupOrOtherWriteIsAccepted) {
  struct stat st {};
  st.st_mode = S_IFDIR | 0755;
  st.st_uid = ::geteuid();
  EXPECT_EQ(private_directory_problem(st), "");
  st.st_mode = S_IFDIR | 0775;
  EXPECT_NE(private_directory_problem(st), "");
  st.st_mode = S_IFDIR | 0700;
  st.st_uid = ::geteuid() + 1;
  EXPECT_NE(private_directory_problem(st).find("owned by uid"), std::string::npos);
}

}  // namespace
}  // namespace unetback::util
