// Per-vif log limits: a flood of one line about one vif uses up that vif's
// bucket for that line only.

#include "unetback/util/log_limits.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <array>
#include <memory>
#include <sstream>
#include <string>

namespace unetback::util {
namespace {

std::size_t allowed_of(log_limits& limits, const void* site, int attempts) {
  std::size_t allowed = 0;
  for (int i = 0; i < attempts; ++i) {
    std::uint64_t suppressed = 0;
    allowed += limits.allow(site, suppressed) ? 1U : 0U;
  }
  return allowed;
}

TEST(LogLimits, ASiteGetsItsBurstThenNothing) {
  log_limits limits;
  const char site = 0;
  EXPECT_EQ(allowed_of(limits, &site, 100), log_burst);
}

TEST(LogLimits, OneVifsFloodLeavesAnotherVifsBucketFull) {
  log_limits flooded;
  log_limits quiet;
  const char site = 0;
  EXPECT_EQ(allowed_of(flooded, &site, 1000), log_burst);
  EXPECT_EQ(allowed_of(quiet, &site, 1), 1U);
}

TEST(LogLimits, SitesOfOneVifHaveTheirOwnBuckets) {
  log_limits limits;
  const char flooded = 0;
  const char other = 0;
  EXPECT_EQ(allowed_of(limits, &flooded, 1000), log_burst);
  EXPECT_EQ(allowed_of(limits, &other, 1), 1U);
}

TEST(LogLimits, SitesBeyondTheTableShareOneBucket) {
  log_limits limits;
  std::array<char, log_limits::max_sites + 5> sites{};
  for (std::size_t i = 0; i < log_limits::max_sites; ++i) {
    EXPECT_EQ(allowed_of(limits, &sites.at(i), 1), 1U);
  }
  std::size_t allowed = 0;
  for (std::size_t i = log_limits::max_sites; i < sites.size(); ++i) {
    allowed += allowed_of(limits, &sites.at(i), 10);
  }
  EXPECT_EQ(allowed, log_burst);  // 5 sites x 10 lines, one bucket
}

// The macro, through spdlog: the second vif's one line is in the log after
// the first vif's thousand.
TEST(LogLimits, TheMacroLogsAnotherVifsLineAfterAFlood) {
  std::ostringstream out;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(out)));
  log_limits vif1;
  log_limits vif2;
  const auto warn = [](log_limits& limits, const char* vif) {
    UNETBACK_LOG_LIMITED(limits, spdlog::level::warn, "{}: dropping guest TX packet", vif);
  };
  for (int i = 0; i < 1000; ++i) {
    warn(vif1, "vif1.0");
  }
  warn(vif2, "vif2.0");
  spdlog::set_default_logger(previous);
  const std::string log = out.str();
  std::size_t vif1_lines = 0;
  for (auto at = log.find("vif1.0:"); at != std::string::npos; at = log.find("vif1.0:", at + 1)) {
    ++vif1_lines;
  }
  EXPECT_EQ(vif1_lines, log_burst);
  EXPECT_NE(log.find("vif2.0: dropping guest TX packet"), std::string::npos) << log;
}

}  // namespace
}  // namespace unetback::util
