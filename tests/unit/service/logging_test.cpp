// Log level and target selection: strict parsing (a typo in unetback.toml or on the
// control socket is an error, not "off"), and where "auto" sends the log.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "test_support.hpp"
#include "unetback/service/journal_sink.hpp"
#include "unetback/service/logging.hpp"

namespace unetback::service {
namespace {

TEST(LogLevel, EveryDocumentedNameParses) {
  EXPECT_EQ(parse_log_level("trace"), spdlog::level::trace);
  EXPECT_EQ(parse_log_level("debug"), spdlog::level::debug);
  EXPECT_EQ(parse_log_level("info"), spdlog::level::info);
  EXPECT_EQ(parse_log_level("warning"), spdlog::level::warn);
  EXPECT_EQ(parse_log_level("warn"), spdlog::level::warn);
  EXPECT_EQ(parse_log_level("error"), spdlog::level::err);
  EXPECT_EQ(parse_log_level("err"), spdlog::level::err);
  EXPECT_EQ(parse_log_level("critical"), spdlog::level::critical);
  EXPECT_EQ(parse_log_level("off"), spdlog::level::off);
  EXPECT_EQ(parse_log_level("DEBUG"), spdlog::level::debug);
}

TEST(LogLevel, TypoIsRejectedWithTheAllowedNames) {
  try {
    (void)parse_log_level("verbose");
    FAIL() << "accepted 'verbose'";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'verbose'"), std::string::npos) << what;
    EXPECT_NE(what.find("trace, debug, info, warning, error, critical, off"), std::string::npos)
        << what;
  }
  EXPECT_THROW((void)parse_log_level(""), std::invalid_argument);
  EXPECT_THROW((void)parse_log_level("info "), std::invalid_argument);
}

TEST(LogLevel, CanonicalNamesRoundTrip) {
  for (const auto* name : {"trace", "debug", "info", "warning", "error", "critical", "off"}) {
    EXPECT_EQ(log_level_name(parse_log_level(name)), name);
  }
}

TEST(LogTarget, NamesParseAndUnknownOnesAreRejected) {
  EXPECT_EQ(parse_log_target("auto"), log_target::automatic);
  EXPECT_EQ(parse_log_target("journal"), log_target::journal);
  EXPECT_EQ(parse_log_target("stderr"), log_target::standard_error);
  try {
    (void)parse_log_target("syslog");
    FAIL() << "accepted 'syslog'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("auto, journal, stderr"), std::string::npos);
  }
}

TEST(JournalPriority, SeverityMapsToSyslogPriorities) {
  EXPECT_EQ(journal_priority(spdlog::level::trace), LOG_DEBUG);
  EXPECT_EQ(journal_priority(spdlog::level::debug), LOG_DEBUG);
  EXPECT_EQ(journal_priority(spdlog::level::info), LOG_INFO);
  EXPECT_EQ(journal_priority(spdlog::level::warn), LOG_WARNING);
  EXPECT_EQ(journal_priority(spdlog::level::err), LOG_ERR);
  EXPECT_EQ(journal_priority(spdlog::level::critical), LOG_CRIT);
}

std::string stream_id_of_stderr(bool off_by_one_inode) {
  struct stat st {};
  EXPECT_EQ(::fstat(STDERR_FILENO, &st), 0);
  const auto ino = static_cast<unsigned long long>(st.st_ino) + (off_by_one_inode ? 1 : 0);
  return std::to_string(static_cast<unsigned long long>(st.st_dev)) + ":" + std::to_string(ino);
}

class JournalStream : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("JOURNAL_STREAM"); }
};

TEST_F(JournalStream, StderrConnectedToJournaldSelectsTheJournal) {
  ::setenv("JOURNAL_STREAM", stream_id_of_stderr(false).c_str(), 1);
  EXPECT_TRUE(stderr_is_journal());
  EXPECT_EQ(resolve_log_target(log_target::automatic), log_target::journal);
}

TEST_F(JournalStream, InheritedVariableWithStderrRedirectedSelectsStderr) {
  // A service that starts the daemon with 2>file keeps JOURNAL_STREAM in its env.
  ::setenv("JOURNAL_STREAM", stream_id_of_stderr(true).c_str(), 1);
  EXPECT_FALSE(stderr_is_journal());
  EXPECT_EQ(resolve_log_target(log_target::automatic), log_target::standard_error);
}

TEST_F(JournalStream, MalformedOrMissingVariableSelectsStderr) {
  for (const auto* bad : {"", "12", "12:", ":34", "a:b", "1:2:3", "-1:5"}) {
    ::setenv("JOURNAL_STREAM", bad, 1);
    EXPECT_FALSE(stderr_is_journal()) << bad;
  }
  ::unsetenv("JOURNAL_STREAM");
  EXPECT_FALSE(stderr_is_journal());
  EXPECT_EQ(resolve_log_target(log_target::automatic), log_target::standard_error);
}

TEST_F(JournalStream, ExplicitTargetsAreNotOverridden) {
  ::setenv("JOURNAL_STREAM", stream_id_of_stderr(false).c_str(), 1);
  EXPECT_EQ(resolve_log_target(log_target::standard_error), log_target::standard_error);
  ::unsetenv("JOURNAL_STREAM");
  EXPECT_EQ(resolve_log_target(log_target::journal), log_target::journal);
}

TEST(ConfigureLogging, StderrTargetWritesLinesAtOrAboveTheLevel) {
  test::temp_dir dir;
  const auto file = (dir.path() / "stderr.log").string();
  const auto out = test::run_in_child([&] {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, STDERR_FILENO);
    const auto used = configure_logging(log_target::automatic, spdlog::level::warn);
    spdlog::info("hidden info line");
    spdlog::warn("vif{}.{} visible warning", 3, 0);
    spdlog::default_logger()->flush();
    return std::string(used == log_target::standard_error ? "stderr" : "journal") + " " +
           spdlog::default_logger()->name();
  });
  EXPECT_EQ(out.output, "stderr unetbackd");
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("[warning] vif3.0 visible warning"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("hidden info line"), std::string::npos) << text.str();
}

TEST(ConfigureLogging, JournalWithoutJournaldIsAClearError) {
  if (::access("/run/systemd/journal/socket", W_OK) == 0) {
    GTEST_SKIP() << "journald runs here";
  }
  try {
    configure_logging(log_target::journal, spdlog::level::info);
    FAIL() << "journal target accepted without journald";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--log-target stderr"), std::string::npos);
  }
}

}  // namespace
}  // namespace unetback::service
