// The journald sink, against a fake journald: a forked child gets a private mount
// namespace with a tmpfs on /run, binds /run/systemd/journal/socket itself and reads
// the native-protocol datagram sd_journal_sendv produces.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "test_support.hpp"
#include "unetback/service/logging.hpp"

namespace unetback::service {
namespace {

int bind_fake_journald() {
  if (::unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") != 0 ||
      ::mkdir("/run/systemd", 0755) != 0 || ::mkdir("/run/systemd/journal", 0755) != 0) {
    throw std::runtime_error(std::string("private /run: ") + std::strerror(errno));
  }
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, "/run/systemd/journal/socket");
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    throw std::runtime_error(std::string("bind fake journald: ") + std::strerror(errno));
  }
  return fd;
}

// Everything journald received (datagrams separated by "\n--\n").
std::string drain(int fd) {
  std::string all;
  std::array<char, 65536> buf{};
  for (ssize_t n; (n = ::recv(fd, buf.data(), buf.size(), MSG_DONTWAIT)) > 0;) {
    all.append(buf.data(), static_cast<std::size_t>(n)).append("\n--\n");
  }
  return all;
}

class JournalSink : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::have_capability(CAP_SYS_ADMIN)) {
      GTEST_SKIP() << "needs CAP_SYS_ADMIN for a private mount namespace";
    }
  }
};

TEST_F(JournalSink, WorkerWarningCarriesPriorityIdentifierAndThreadName) {
  const auto r = test::run_in_child([] {
    const int journald = bind_fake_journald();
    configure_logging(log_target::journal, spdlog::level::info);
    pthread_setname_np(pthread_self(), "vif3.0-q1");
    spdlog::debug("below the level");
    spdlog::warn("vif3.0: queue {} stalled", 1);
    return drain(journald);
  });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("MESSAGE=vif3.0: queue 1 stalled\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("PRIORITY=4\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("SYSLOG_IDENTIFIER=unetbackd\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("UNETBACK_THREAD=vif3.0-q1\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("TID="), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("below the level"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\n--\n"), r.output.size() - 4) << "exactly one record expected";
}

TEST_F(JournalSink, MultiLineMessageStaysOneRecord) {
  // A guest-provided string with a newline must not split into a forged field.
  const auto r = test::run_in_child([] {
    const int journald = bind_fake_journald();
    configure_logging(log_target::journal, spdlog::level::info);
    spdlog::error("bad key 'x\nPRIORITY=0'");
    return drain(journald);
  });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Binary-safe form: "MESSAGE\n" + 64-bit little-endian length + bytes.
  EXPECT_NE(r.output.find("MESSAGE\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bad key 'x\nPRIORITY=0'"), std::string::npos);
  EXPECT_NE(r.output.find("PRIORITY=3\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\nPRIORITY=0\n"), std::string::npos) << r.output;
}

TEST_F(JournalSink, JournaldGoneMidRunFallsBackToStderrInsteadOfThrowing) {
  const auto r = test::run_in_child([] {
    const int journald = bind_fake_journald();
    configure_logging(log_target::journal, spdlog::level::info);
    ::close(journald);
    ::unlink("/run/systemd/journal/socket");
    spdlog::critical("still alive");
    return std::string("returned");
  });
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "returned");
}

}  // namespace
}  // namespace unetback::service
