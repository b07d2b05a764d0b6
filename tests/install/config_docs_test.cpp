// The configuration an operator is given must be the configuration the daemon
// accepts: the shipped /etc/unetback/unetback.toml, the same file with every
// documented key uncommented, and the EXAMPLE of unetback.toml(5), all parsed by
// unetbackd's own option parser.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <variant>

#include <unistd.h>

#include "unetback/daemon/options.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::daemon {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ConfigDocs : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* src = std::getenv("UNETBACK_SOURCE_DIR");
    ASSERT_NE(src, nullptr) << "UNETBACK_SOURCE_DIR not set";
    source_ = src;
  }

  // Parses `text` as the configuration file; fails the test on an early exit.
  daemon_options parse(const std::string& text) {
    const auto file = dir_ / "unetback.toml";
    std::ofstream(file) << text;
    auto result = parse_command_line({"--config", file.string()});
    if (const auto* stop = std::get_if<early_exit>(&result)) {
      ADD_FAILURE() << "rejected:\n" << text << "\n--> " << stop->message;
      return {};
    }
    return std::get<daemon_options>(result);
  }

  fs::path source_;
  test_support::temp_dir tmp_{"unetback-config-docs-"};
  fs::path dir_ = tmp_.path();
};

TEST_F(ConfigDocs, ShippedConfigurationMeansTheDefaults) {
  const auto o = parse(read(source_ / "tools/systemd/unetback.toml.example"));
  EXPECT_EQ(o.platform, "xen");
  EXPECT_EQ(o.log_level, spdlog::level::info);
  EXPECT_EQ(o.log_target, service::log_target::automatic);
  EXPECT_EQ(o.supervisor.defaults.max_queues, default_max_queues());
  EXPECT_TRUE(o.supervisor.defaults.wait_for_hotplug);
  EXPECT_TRUE(o.supervisor.per_vif.empty());
  EXPECT_FALSE(o.metrics_listen.has_value());  // off unless asked for
}

TEST_F(ConfigDocs, EveryKeyTheShippedFileDocumentsIsAccepted) {
  // "#key = value" and "#[vif...]" lines are settings; "# text" lines are prose.
  const std::regex setting(R"(^#([a-z\[][^\n]*)$)", std::regex::multiline);
  const auto text =
      std::regex_replace(read(source_ / "tools/systemd/unetback.toml.example"), setting, "$1");
  ASSERT_NE(text.find("\nmax-queues = 8"), std::string::npos) << text;
  const auto o = parse(text);
  EXPECT_EQ(o.supervisor.defaults.max_queues, 8U);
  EXPECT_EQ(o.supervisor.defaults.tuning.rx_backlog_bytes, 524288U);
  ASSERT_TRUE(o.metrics_listen.has_value());
  EXPECT_EQ(o.metrics_listen->port(), 9477);
  ASSERT_EQ(o.supervisor.per_vif.count(control::vif_id{domid{3}, 0}), 1U);
  EXPECT_EQ(o.supervisor.per_vif.at(control::vif_id{domid{3}, 0}).max_queues, 2U);
  EXPECT_EQ(o.supervisor.per_vif.at(control::vif_id{domid{3}, 0}).tuning.poll_us, 50U);
}

TEST_F(ConfigDocs, ManPageExampleIsAValidConfiguration) {
  const auto page = read(source_ / "docs/man/unetback.toml.5");
  const auto start = page.find("\n.SH EXAMPLE\n.EX\n");
  const auto end = page.find("\n.EE\n", start);
  ASSERT_NE(start, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  auto text = page.substr(start + 17, end - start - 17);
  text = std::regex_replace(text, std::regex(R"(\\-)"), "-");
  const auto o = parse(text);
  EXPECT_EQ(o.supervisor.defaults.max_queues, 4U);
  EXPECT_EQ(o.supervisor.defaults.tuning.poll_us, 20U);
  ASSERT_TRUE(o.metrics_listen.has_value());
  ASSERT_EQ(o.supervisor.per_vif.count(control::vif_id{domid{7}, 0}), 1U);
  EXPECT_EQ(o.supervisor.per_vif.at(control::vif_id{domid{7}, 0}).tuning.poll_us, 100U);
  EXPECT_EQ(o.supervisor.per_vif.at(control::vif_id{domid{7}, 0}).max_queues, 2U);
}

}  // namespace
}  // namespace unetback::daemon
