// parse_command_line(): defaults, the TOML file, flags over the file, and
// every rejected value naming its flag or key and the allowed range.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "unetback/daemon/options.hpp"

namespace unetback::daemon {
namespace {

class DaemonOptions : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/unetback-cfg-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    ::close(fd);
    config_ = tmpl;
  }
  void TearDown() override { ::unlink(config_.c_str()); }

  void write_config(const std::string& text) { std::ofstream(config_, std::ios::trunc) << text; }
  daemon_options ok(std::vector<std::string> args) {
    auto r = parse_command_line(args);
    if (auto* e = std::get_if<early_exit>(&r)) {
      ADD_FAILURE() << e->message;
      return {};
    }
    return std::get<daemon_options>(r);
  }
  early_exit rejected(std::vector<std::string> args) {
    auto r = parse_command_line(args);
    EXPECT_TRUE(std::holds_alternative<early_exit>(r));
    return std::holds_alternative<early_exit>(r) ? std::get<early_exit>(r) : early_exit{};
  }
  std::vector<std::string> with_config(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_});
    return args;
  }
  std::string config_;
};

TEST_F(DaemonOptions, DefaultsFollowLinuxNetback) {
  const daemon_options o = ok(with_config({}));
  EXPECT_EQ(o.platform, "xen");
  EXPECT_EQ(o.sim_dir, "/run/unetback-sim");
  EXPECT_FALSE(o.xenstore);
  EXPECT_EQ(o.supervisor.defaults.max_queues, default_max_queues());
  EXPECT_LE(default_max_queues(), 8U);
  EXPECT_TRUE(o.supervisor.defaults.wait_for_hotplug);
  EXPECT_EQ(o.supervisor.defaults.tuning.tx_batch, 64U);
}

TEST_F(DaemonOptions, FlagsAreApplied) {
  const daemon_options o = ok(with_config({"--platform", "sim", "--sim-dir", "/tmp/s", "--xenstore",
                                           "/tmp/x/socket", "--max-queues", "3", "--poll-us", "20",
                                           "--no-wait-hotplug", "--log-level", "debug"}));
  EXPECT_EQ(o.platform, "sim");
  EXPECT_EQ(o.sim_dir, "/tmp/s");
  EXPECT_EQ(o.xenstore, "/tmp/x/socket");
  EXPECT_EQ(o.supervisor.defaults.max_queues, 3U);
  EXPECT_EQ(o.supervisor.defaults.tuning.poll_us, 20U);
  EXPECT_FALSE(o.supervisor.defaults.wait_for_hotplug);
  EXPECT_EQ(o.log_level, spdlog::level::debug);
}

TEST_F(DaemonOptions, UnknownPlatformIsAUsageError) {
  const early_exit e = rejected(with_config({"--platform", "kvm"}));
  EXPECT_EQ(e.status, exit_usage);
  EXPECT_NE(e.message.find("--platform"), std::string::npos);
}

TEST_F(DaemonOptions, MaxQueuesOutsideOneToSixtyFourIsRejected) {
  for (const char* bad : {"0", "65", "-1", "eight"}) {
    const early_exit e = rejected(with_config({"--max-queues", bad}));
    EXPECT_EQ(e.status, exit_usage) << bad;
    EXPECT_NE(e.message.find("--max-queues"), std::string::npos) << e.message;
  }
}

TEST_F(DaemonOptions, UnknownLogLevelNamesTheFlagAndTheChoices) {
  const early_exit e = rejected(with_config({"--log-level", "loud"}));
  EXPECT_EQ(e.status, exit_usage);
  EXPECT_NE(e.message.find("--log-level"), std::string::npos);
  EXPECT_NE(e.message.find("warning"), std::string::npos);
}

TEST_F(DaemonOptions, ContradictoryHotplugFlagsAreRejected) {
  EXPECT_EQ(rejected(with_config({"--wait-for-hotplug", "true", "--no-wait-hotplug"})).status,
            exit_usage);
}

TEST_F(DaemonOptions, ConfigFileSetsDaemonAndPerVifValues) {
  write_config(
      "[daemon]\nplatform = \"sim\"\nmax-queues = 4\npoll-us = 7\nwait-for-hotplug = false\n"
      "rx-backlog-bytes = 1048576\nmax-xdp-headroom = 256\n"
      "[vif.\"3.0\"]\nmax-queues = 2\n");
  const daemon_options o = ok(with_config({}));
  EXPECT_EQ(o.platform, "sim");
  EXPECT_EQ(o.supervisor.defaults.max_queues, 4U);
  EXPECT_EQ(o.supervisor.defaults.tuning.poll_us, 7U);
  EXPECT_FALSE(o.supervisor.defaults.wait_for_hotplug);
  EXPECT_EQ(o.supervisor.defaults.tuning.rx_backlog_bytes, 1048576U);
  EXPECT_EQ(o.supervisor.defaults.max_xdp_headroom, 256U);
  const auto& v = o.supervisor.per_vif.at(control::vif_id{domid{3}, 0});
  EXPECT_EQ(v.max_queues, 2U);
  EXPECT_EQ(v.tuning.poll_us, 7U);  // the rest inherits [daemon]
}

TEST_F(DaemonOptions, FlagsWinOverTheFile) {
  write_config("[daemon]\nmax-queues = 4\nplatform = \"sim\"\n");
  const daemon_options o = ok(with_config({"--max-queues", "6"}));
  EXPECT_EQ(o.supervisor.defaults.max_queues, 6U);
  EXPECT_EQ(o.platform, "sim");
}

TEST_F(DaemonOptions, OutOfRangeKeyInTheFileNamesKeyAndRange) {
  write_config("[daemon]\nmax-queues = 99\n");
  const early_exit e = rejected(with_config({}));
  EXPECT_EQ(e.status, exit_usage);
  EXPECT_NE(e.message.find("max-queues"), std::string::npos);
  EXPECT_NE(e.message.find("1..64"), std::string::npos);
}

TEST_F(DaemonOptions, KeepVifsIsOffByDefaultAndSetByFlagOrFile) {
  EXPECT_FALSE(ok(with_config({})).keep_vifs);
  EXPECT_TRUE(ok(with_config({"--keep-vifs"})).keep_vifs);
  write_config("[daemon]\nkeep-vifs = true\n");
  EXPECT_TRUE(ok(with_config({})).keep_vifs);
  write_config("[daemon]\nkeep-vifs = 1\n");
  const auto e = rejected(with_config({}));
  EXPECT_NE(e.message.find("keep-vifs"), std::string::npos);
  EXPECT_NE(e.message.find("true or false"), std::string::npos);
}

TEST_F(DaemonOptions, DirectPathIsOffByDefaultAndSetByFlagFileOrVifTable) {
  EXPECT_FALSE(ok(with_config({})).supervisor.defaults.direct_path);
  EXPECT_TRUE(ok(with_config({"--direct-path", "true"})).supervisor.defaults.direct_path);
  EXPECT_FALSE(ok(with_config({"--direct-path", "false"})).supervisor.defaults.direct_path);
  write_config("[daemon]\ndirect-path = true\n");
  EXPECT_TRUE(ok(with_config({})).supervisor.defaults.direct_path);
  EXPECT_FALSE(ok(with_config({"--direct-path", "false"})).supervisor.defaults.direct_path);
  write_config("[vif.\"1.0\"]\ndirect-path = true\n[vif.\"2.0\"]\nmax-queues = 2\n");
  const daemon_options o = ok(with_config({}));
  EXPECT_FALSE(o.supervisor.defaults.direct_path);
  EXPECT_TRUE(o.supervisor.per_vif.at(control::vif_id{domid{1}, 0}).direct_path);
  EXPECT_FALSE(o.supervisor.per_vif.at(control::vif_id{domid{2}, 0}).direct_path);
  write_config("[daemon]\ndirect-path = \"yes\"\n");
  const auto e = rejected(with_config({}));
  EXPECT_EQ(e.status, exit_usage);
  EXPECT_NE(e.message.find("direct-path"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("true or false"), std::string::npos) << e.message;
  write_config("[vif.\"1.0\"]\ndirect-path = 1\n");
  EXPECT_NE(rejected(with_config({})).message.find("[vif.\"1.0\"] direct-path"), std::string::npos);
  EXPECT_NE(rejected(with_config({"--direct-path", "maybe"})).message.find("--direct-path"),
            std::string::npos);
}

TEST_F(DaemonOptions, WrongTypeInTheFileIsRejected) {
  write_config("[daemon]\nwait-for-hotplug = \"yes\"\n");
  EXPECT_NE(rejected(with_config({})).message.find("true or false"), std::string::npos);
}

TEST_F(DaemonOptions, UnknownKeyOrSectionInTheFileIsRejected) {
  write_config("[daemon]\nmax_queues = 4\n");
  EXPECT_NE(rejected(with_config({})).message.find("max_queues: unknown key"), std::string::npos);
  write_config("[deamon]\n");
  EXPECT_NE(rejected(with_config({})).message.find("deamon"), std::string::npos);
  write_config("[vif.\"3.0\"]\nplatform = \"sim\"\n");
  EXPECT_NE(rejected(with_config({})).message.find("unknown key"), std::string::npos);
  write_config("[vif.\"three\"]\nmax-queues = 2\n");
  EXPECT_NE(rejected(with_config({})).message.find("<domid>.<devid>"), std::string::npos);
}

TEST_F(DaemonOptions, TomlSyntaxErrorReportsLineAndColumn) {
  write_config("[daemon]\nmax-queues = \n");
  const early_exit e = rejected(with_config({}));
  EXPECT_NE(e.message.find(config_ + ":2:"), std::string::npos) << e.message;
}

TEST_F(DaemonOptions, MissingExplicitConfigFileIsAnError) {
  EXPECT_EQ(rejected({"--config", "/nonexistent/unetback.toml"}).status, exit_usage);
}

TEST_F(DaemonOptions, HelpAndVersionExitZero) {
  const early_exit help = rejected({"--help"});
  EXPECT_EQ(help.status, exit_ok);
  EXPECT_NE(help.message.find("--max-queues"), std::string::npos);
  EXPECT_EQ(rejected({"--version"}).status, exit_ok);
}

}  // namespace
}  // namespace unetback::daemon
