// unetback.toml validation, table-driven over every key the file accepts: an
// out-of-range value and a wrong-type value each give a message that names the
// file, the section, the key and the allowed values, and unetbackd exits 2
// before it touches XenStore. Also: unknown keys and sections, unreadable
// files, and each command-line flag overriding the file.

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "unetback/daemon/options.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::daemon {
namespace {

// One key of unetback.toml: a value outside its allowed range (empty: the key
// has no range, any value of the right type is accepted), a value of the
// wrong TOML type, and what the message must quote as the allowed values.
struct key_case {
  const char* key;
  const char* out_of_range;
  const char* wrong_type;
  const char* allowed;
  bool per_vif;  ///< also valid in [vif."D.N"]
  /// What a wrong type's message quotes, when not `allowed`.
  const char* wrong_type_allowed = nullptr;

  [[nodiscard]] const char* allowed_for(const char* value) const {
    return value == wrong_type && wrong_type_allowed != nullptr ? wrong_type_allowed : allowed;
  }
};

// clang-format off
constexpr std::array key_cases{
    key_case{"max-queues", "65", "\"4\"", "1..64", true},
    key_case{"max-queues", "0", "4.0", "1..64", true},
    key_case{"poll-us", "1000001", "true", "0..1000000", true},
    key_case{"poll-us", "-1", "[50]", "0..1000000", true},
    key_case{"poll-budget-pct", "101", "\"25%\"", "0..100", true},
    key_case{"poll-max-steal-pct", "-1", "5.5", "0..100", true},
    key_case{"tx-batch", "257", "64.5", "1..256", true},
    key_case{"tx-batch", "0", "\"64\"", "1..256", true},
    key_case{"rx-batch", "257", "false", "1..256", true},
    key_case{"rx-batch", "0", "{ n = 1 }", "1..256", true},
    key_case{"rx-backlog-bytes", "65535", "\"1M\"", "65536..1073741824", true},
    key_case{"rx-backlog-bytes", "1073741825", "1e6", "65536..1073741824", true},
    key_case{"rx-stall-timeout-ms", "999", "\"10s\"", "1000..3600000", true},
    key_case{"rx-stall-timeout-ms", "3600001", "1979-05-27", "1000..3600000", true},
    key_case{"rx-drain-timeout-ms", "999", "\"10s\"", "1000..3600000", true},
    key_case{"fault-backoff-max-ms", "600001", "\"10s\"", "0..600000", true},
    key_case{"fault-backoff-max-ms", "-1", "1.5", "0..600000", true},
    key_case{"max-xdp-headroom", "1025", "\"256\"", "0..1024", false},
    key_case{"max-xdp-headroom", "-1", "256.0", "0..1024", false},
    key_case{"wait-for-hotplug", "", "1", "true or false", true},
    key_case{"wait-for-hotplug", "", "\"yes\"", "true or false", true},
    key_case{"notify-always", "", "0", "true or false", true},
    key_case{"direct-path", "", "1", "true or false", true},
    key_case{"direct-path", "", "\"on\"", "true or false", true},
    key_case{"platform", "\"kvm\"", "1", "xen, sim", false},
    key_case{"platform", "\"XEN \"", "[\"xen\"]", "xen, sim", false},
    key_case{"log-level", "\"loud\"", "3", "warning", false},
    key_case{"log-target", "\"syslog\"", "true", "journal", false},
    key_case{"sim-dir", "\"\"", "42", "absolute path", false, "must be a string"},
    key_case{"xenstore", "\"run/socket\"", "[\"/run/xenstored/socket\"]", "absolute path", false,
             "must be a string"},
    key_case{"control-socket", "\"ctl.sock\"", "false", "absolute path", false,
             "must be a string"},
    key_case{"state-dir", "\"state\"", "[\"/run/unetback\"]", "absolute path", false,
             "must be a string"},
    key_case{"keep-vifs", "", "1", "true or false", false},
    key_case{"metrics-listen", "\"localhost:9477\"", "9477", "ADDRESS:PORT", false,
             "must be a string"},
    key_case{"metrics-listen", "\"127.0.0.1:0\"", "[\"127.0.0.1:9477\"]", "1..65535", false,
             "must be a string"},
};
// clang-format on

class ConfigValidation : public ::testing::Test {
 protected:
  void write_config(const std::string& text) { std::ofstream(config_, std::ios::trunc) << text; }

  // The message parse_command_line() stops with (fails the test if it did
  // not stop with exit_usage).
  std::string usage_error(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_});
    const auto r = parse_command_line(args);
    const auto* e = std::get_if<early_exit>(&r);
    if (e == nullptr) {
      ADD_FAILURE() << "accepted: " << read_back();
      return {};
    }
    EXPECT_EQ(e->status, exit_usage) << e->message;
    return e->message;
  }
  daemon_options accepted(std::vector<std::string> args) {
    args.insert(args.begin(), {"--config", config_});
    auto r = parse_command_line(args);
    if (const auto* e = std::get_if<early_exit>(&r)) {
      ADD_FAILURE() << e->message;
      return {};
    }
    return std::get<daemon_options>(r);
  }
  // unetbackd itself on this file: its exit status and stderr.
  std::pair<int, std::string> run_daemon(const std::string& extra = "") {
    const std::string cmd =
        std::string(UNETBACKD_PATH) + " --config " + config_ + " " + extra + " 2>&1 >/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 512> buf{};
    while (p != nullptr && std::fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) {
      out += buf.data();
    }
    const int raw = p == nullptr ? -1 : ::pclose(p);
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
  }
  std::string read_back() const {
    std::ifstream in(config_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  test_support::temp_dir tmp_{"unetback-cfgv-"};
  std::string dir_ = tmp_.path().string();
  std::string config_ = dir_ + "/unetback.toml";
};

void expect_names(const std::string& message, const std::vector<std::string>& parts) {
  for (const auto& p : parts) {
    EXPECT_NE(message.find(p), std::string::npos) << "'" << p << "' not in: " << message;
  }
}

TEST_F(ConfigValidation, EveryDaemonKeyOutOfRangeNamesKeyAndRange) {
  for (const key_case& k : key_cases) {
    if (*k.out_of_range == '\0') {
      continue;
    }
    SCOPED_TRACE(std::string(k.key) + " = " + k.out_of_range);
    write_config(std::string("[daemon]\n") + k.key + " = " + k.out_of_range + "\n");
    expect_names(usage_error({}), {config_, "[daemon] " + std::string(k.key), k.allowed});
  }
}

TEST_F(ConfigValidation, EveryDaemonKeyWithTheWrongTypeNamesKeyAndRange) {
  for (const key_case& k : key_cases) {
    SCOPED_TRACE(std::string(k.key) + " = " + k.wrong_type);
    write_config(std::string("[daemon]\n") + k.key + " = " + k.wrong_type + "\n");
    expect_names(usage_error({}),
                 {config_, "[daemon] " + std::string(k.key), k.allowed_for(k.wrong_type)});
  }
}

TEST_F(ConfigValidation, EveryPerVifKeyIsCheckedInVifSectionsToo) {
  for (const key_case& k : key_cases) {
    if (!k.per_vif) {
      continue;
    }
    for (const char* value : {k.out_of_range, k.wrong_type}) {
      if (*value == '\0') {
        continue;
      }
      SCOPED_TRACE(std::string(k.key) + " = " + value);
      write_config(std::string("[vif.\"7.1\"]\n") + k.key + " = " + value + "\n");
      expect_names(usage_error({}),
                   {config_, "[vif.\"7.1\"] " + std::string(k.key), k.allowed_for(value)});
    }
  }
}

TEST_F(ConfigValidation, DaemonOnlyKeysAreUnknownInVifSections) {
  for (const char* key :
       {"platform", "log-level", "log-target", "max-xdp-headroom", "sim-dir", "xenstore",
        "control-socket", "state-dir", "keep-vifs", "metrics-listen"}) {
    write_config(std::string("[vif.\"7.1\"]\n") + key + " = \"x\"\n");
    expect_names(usage_error({}), {"[vif.\"7.1\"] " + std::string(key), "unknown key"});
  }
}

TEST_F(ConfigValidation, RangeBoundsThemselvesAreAccepted) {
  write_config(
      "[daemon]\nmax-queues = 64\npoll-us = 1000000\ntx-batch = 256\nrx-batch = 1\n"
      "rx-backlog-bytes = 65536\nrx-stall-timeout-ms = 3600000\nmax-xdp-headroom = 0\n"
      "[vif.\"32751.65535\"]\nmax-queues = 1\npoll-us = 0\nrx-stall-timeout-ms = 1000\n"
      "rx-backlog-bytes = 1073741824\nrx-drain-timeout-ms = 3600000\n");
  const daemon_options o = accepted({});
  EXPECT_EQ(o.supervisor.defaults.max_queues, 64U);
  EXPECT_EQ(o.supervisor.defaults.tuning.poll_us, 1000000U);
  EXPECT_EQ(o.supervisor.defaults.tuning.rx_stall_timeout, std::chrono::milliseconds(3600000));
  const auto& v = o.supervisor.per_vif.at(control::vif_id{domid{32751}, 65535});
  EXPECT_EQ(v.max_queues, 1U);
  EXPECT_EQ(v.tuning.rx_backlog_bytes, 1073741824U);
  EXPECT_EQ(v.tuning.rx_stall_timeout, std::chrono::milliseconds(1000));
  EXPECT_EQ(v.tuning.rx_drain_timeout, std::chrono::milliseconds(3600000));
  EXPECT_EQ(o.supervisor.defaults.tuning.rx_drain_timeout, std::chrono::milliseconds(10000));
}

TEST_F(ConfigValidation, UnetbackdExitsTwoForEveryBadKey) {
  for (const key_case& k : key_cases) {
    for (const char* value : {k.out_of_range, k.wrong_type}) {
      if (*value == '\0') {
        continue;
      }
      SCOPED_TRACE(std::string(k.key) + " = " + value);
      write_config(std::string("[daemon]\n") + k.key + " = " + value + "\n");
      // --xenstore to a path that does not exist: were the file accepted, the
      // daemon would fail later with status 1, not 2.
      const auto [status, err] = run_daemon("--platform sim --xenstore " + dir_ + "/none");
      EXPECT_EQ(status, 2) << err;
      expect_names(err, {config_, k.key, k.allowed_for(value)});
    }
  }
}

TEST_F(ConfigValidation, UnknownSectionsAndKeysAreNamed) {
  for (const char* text :
       {"[daemon]\nmax_queues = 4\n", "[daemon]\npoll = 5\n", "[deamon]\n", "[vif]\nx = 1\n",
        "max-queues = 4\n", "[vif.\"3.0\"]\nmtu = 9000\n", "[[daemon]]\n"}) {
    SCOPED_TRACE(text);
    write_config(text);
    const std::string m = usage_error({});
    EXPECT_TRUE(m.find("unknown key") != std::string::npos ||
                m.find("must be a table") != std::string::npos)
        << m;
    expect_names(m, {config_});
  }
}

TEST_F(ConfigValidation, BadVifSectionNamesAreRejected) {
  for (const char* name : {"3", "3.x", "x.0", "32752.0", "3.65536", "-1.0", "3.0.1"}) {
    SCOPED_TRACE(name);
    write_config(std::string("[vif.\"") + name + "\"]\nmax-queues = 2\n");
    expect_names(usage_error({}), {name, "<domid>.<devid>"});
  }
}

TEST_F(ConfigValidation, UnparsableOrMissingFilesExitTwoNamingTheFile) {
  config_ = dir_ + "/binary.toml";
  write_config(std::string("\x00\xff\xfe[daemon", 9));
  const auto [bin_status, bin_err] = run_daemon();
  EXPECT_EQ(bin_status, 2) << bin_err;
  EXPECT_NE(bin_err.find(config_ + ":1:"), std::string::npos) << bin_err;

  config_ = dir_ + "/missing.toml";
  const auto [missing_status, missing_err] = run_daemon();
  EXPECT_EQ(missing_status, 2);
  expect_names(missing_err, {config_, "no such configuration file"});

  config_ = dir_;  // a directory, not a file
  const auto [dir_status, dir_err] = run_daemon();
  EXPECT_EQ(dir_status, 2);
  expect_names(dir_err, {config_, "not a regular file"});
}

TEST_F(ConfigValidation, UnreadableFileExitsTwoNamingTheFile) {
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {
    GTEST_SKIP() << "needs root and setpriv to run unetbackd as nobody";
  }
  write_config("[daemon]\nmax-queues = 2\n");
  std::filesystem::permissions(dir_, std::filesystem::perms::owner_all |
                                         std::filesystem::perms::group_exec |
                                         std::filesystem::perms::others_exec);
  std::filesystem::permissions(config_, std::filesystem::perms::none);
  const std::string cmd = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups " +
                          std::string(UNETBACKD_PATH) + " --config " + config_ +
                          " --platform sim --xenstore " + dir_ + "/none 2>&1 >/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string err;
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) {
    err += buf.data();
  }
  const int raw = ::pclose(p);
  EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 2) << err;
  EXPECT_NE(err.find(config_), std::string::npos) << err;
}

TEST_F(ConfigValidation, MetricsListenIsOffUnlessGivenAndTheFlagWins) {
  write_config("[daemon]\n");
  EXPECT_FALSE(accepted({}).metrics_listen.has_value());
  write_config("[daemon]\nmetrics-listen = \"127.0.0.1:9477\"\n");
  const auto from_file = accepted({}).metrics_listen;
  ASSERT_TRUE(from_file.has_value());
  EXPECT_EQ(from_file->address().to_string(), "127.0.0.1");
  EXPECT_EQ(from_file->port(), 9477);
  const auto from_flag = accepted({"--metrics-listen", "[::1]:19477"}).metrics_listen;
  ASSERT_TRUE(from_flag.has_value());
  EXPECT_TRUE(from_flag->address().is_v6());
  EXPECT_EQ(from_flag->port(), 19477);
  expect_names(usage_error({"--metrics-listen", "127.0.0.1"}),
               {"--metrics-listen", "ADDRESS:PORT"});
}

TEST_F(ConfigValidation, EachFlagOverridesItsKeyInTheFile) {
  write_config(
      "[daemon]\nplatform = \"xen\"\nsim-dir = \"/file/sim\"\nxenstore = \"/file/xs\"\n"
      "control-socket = \"/file/ctl\"\nstate-dir = \"/file/state\"\nlog-level = "
      "\"error\"\nlog-target = \"journal\"\n"
      "max-queues = 2\npoll-us = 10\ntx-batch = 8\nrx-batch = 8\nrx-backlog-bytes = 65536\n"
      "wait-for-hotplug = true\n");
  const daemon_options o =
      accepted({"--platform",       "sim",         "--sim-dir",          "/flag/sim",
                "--xenstore",       "/flag/xs",    "--control-socket",   "/flag/ctl",
                "--state-dir",      "/flag/state", "--log-level",        "debug",
                "--log-target",     "stderr",      "--max-queues",       "5",
                "--poll-us",        "0",           "--tx-batch",         "128",
                "--rx-batch",       "32",          "--rx-backlog-bytes", "131072",
                "--no-wait-hotplug"});
  EXPECT_EQ(o.platform, "sim");
  EXPECT_EQ(o.sim_dir, "/flag/sim");
  EXPECT_EQ(o.xenstore, "/flag/xs");
  EXPECT_EQ(o.control_socket, "/flag/ctl");
  EXPECT_EQ(o.state_dir, "/flag/state");
  EXPECT_EQ(o.log_level, spdlog::level::debug);
  EXPECT_EQ(o.log_target, service::log_target::standard_error);
  EXPECT_EQ(o.supervisor.defaults.max_queues, 5U);
  EXPECT_EQ(o.supervisor.defaults.tuning.poll_us, 0U);
  EXPECT_EQ(o.supervisor.defaults.tuning.tx_batch, 128U);
  EXPECT_EQ(o.supervisor.defaults.tuning.rx_batch, 32U);
  EXPECT_EQ(o.supervisor.defaults.tuning.rx_backlog_bytes, 131072U);
  EXPECT_FALSE(o.supervisor.defaults.wait_for_hotplug);
  // The file's values where no flag is given.
  EXPECT_FALSE(o.supervisor.defaults.tuning.notify_always);
  write_config("[daemon]\nwait-for-hotplug = false\nrx-stall-timeout-ms = 5000\n");
  const daemon_options f = accepted({"--wait-for-hotplug", "true", "--notify-always"});
  EXPECT_TRUE(f.supervisor.defaults.wait_for_hotplug);
  EXPECT_TRUE(f.supervisor.defaults.tuning.notify_always);
  EXPECT_EQ(f.supervisor.defaults.tuning.rx_stall_timeout, std::chrono::milliseconds(5000));
  write_config(
      "[daemon]\nrx-stall-timeout-ms = 5000\nrx-drain-timeout-ms = 5000\nmax-xdp-headroom = 64\n");
  const daemon_options g = accepted({"--rx-stall-timeout-ms", "7000", "--rx-drain-timeout-ms",
                                     "2000", "--max-xdp-headroom", "0"});
  EXPECT_EQ(g.supervisor.defaults.tuning.rx_stall_timeout, std::chrono::milliseconds(7000));
  EXPECT_EQ(g.supervisor.defaults.tuning.rx_drain_timeout, std::chrono::milliseconds(2000));
  EXPECT_EQ(g.supervisor.defaults.max_xdp_headroom, 0U);
}

TEST_F(ConfigValidation, FlagsApplyToVifSectionsExceptWhatTheSectionSets) {
  write_config("[daemon]\nmax-queues = 2\npoll-us = 10\n[vif.\"4.0\"]\nmax-queues = 3\n");
  const daemon_options o = accepted({"--max-queues", "6", "--poll-us", "20"});
  const auto& v = o.supervisor.per_vif.at(control::vif_id{domid{4}, 0});
  EXPECT_EQ(v.max_queues, 3U);       // the section's own value
  EXPECT_EQ(v.tuning.poll_us, 20U);  // inherited: the flag beat [daemon]
  EXPECT_EQ(o.supervisor.defaults.max_queues, 6U);
  // A boolean the section does not set follows the flag; one it sets stays.
  write_config(
      "[daemon]\ndirect-path = false\n[vif.\"1.0\"]\ndirect-path = true\n"
      "[vif.\"2.0\"]\nmax-queues = 2\n[vif.\"3.0\"]\ndirect-path = false\n");
  const daemon_options d = accepted({"--direct-path", "true"});
  EXPECT_TRUE(d.supervisor.defaults.direct_path);
  EXPECT_TRUE(d.supervisor.per_vif.at(control::vif_id{domid{1}, 0}).direct_path);
  EXPECT_TRUE(d.supervisor.per_vif.at(control::vif_id{domid{2}, 0}).direct_path);
  EXPECT_FALSE(d.supervisor.per_vif.at(control::vif_id{domid{3}, 0}).direct_path);
  const daemon_options f = accepted({});
  EXPECT_FALSE(f.supervisor.defaults.direct_path);
  EXPECT_TRUE(f.supervisor.per_vif.at(control::vif_id{domid{1}, 0}).direct_path);
  EXPECT_FALSE(f.supervisor.per_vif.at(control::vif_id{domid{2}, 0}).direct_path);
}

TEST_F(ConfigValidation, PollUsTakesAutoInTheFileAndOnTheCommandLine) {
  using datapath::queue_tuning;
  write_config("[daemon]\npoll-us = 30\n[vif.\"4.0\"]\npoll-us = \"auto\"\n");
  const daemon_options f = accepted({});
  EXPECT_EQ(f.supervisor.defaults.tuning.poll_us, 30U);
  EXPECT_EQ(f.supervisor.per_vif.at(control::vif_id{domid{4}, 0}).tuning.poll_us,
            queue_tuning::poll_us_auto);
  const daemon_options c = accepted({"--poll-us", "auto"});
  EXPECT_EQ(c.supervisor.defaults.tuning.poll_us, queue_tuning::poll_us_auto);
  write_config("");
  EXPECT_EQ(accepted({}).supervisor.defaults.tuning.poll_us, queue_tuning::poll_us_auto);
  // Any other text names what is allowed, in the file and on the command line.
  write_config("[daemon]\npoll-us = \"fast\"\n");
  expect_names(usage_error({}), {"poll-us", "auto", "0..1000000"});
  write_config("");
  expect_names(usage_error({"--poll-us", "500us"}), {"--poll-us", "auto", "0..1000000"});
}

TEST_F(ConfigValidation, BadFlagValuesNameTheFlagAndRangeEvenWithAGoodFile) {
  write_config("[daemon]\nmax-queues = 4\n");
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--max-queues", "65"}, {"--max-queues", "64"}},
      {{"--poll-us", "1000001"}, {"--poll-us", "1000000"}},
      {{"--tx-batch", "0"}, {"--tx-batch", "256"}},
      {{"--rx-batch", "300"}, {"--rx-batch", "256"}},
      {{"--rx-backlog-bytes", "1024"}, {"--rx-backlog-bytes", "65536"}},
      {{"--platform", "kvm"}, {"--platform", "sim"}},
      {{"--log-level", "loud"}, {"--log-level", "warning"}},
      {{"--log-target", "syslog"}, {"--log-target", "journal"}},
      {{"--wait-for-hotplug", "maybe"}, {"--wait-for-hotplug"}},
      {{"--direct-path", "maybe"}, {"--direct-path"}},
      {{"--max-queues", "four"}, {"--max-queues"}},
      {{"--state-dir", "run/unetback"}, {"--state-dir", "absolute path"}},
      {{"--rx-stall-timeout-ms", "999"}, {"--rx-stall-timeout-ms", "3600000"}},
      {{"--rx-drain-timeout-ms", "3600001"}, {"--rx-drain-timeout-ms", "3600000"}},
      {{"--max-xdp-headroom", "1025"}, {"--max-xdp-headroom", "1024"}},
  };
  for (const auto& [args, parts] : cases) {
    SCOPED_TRACE(args.front() + " " + args.back());
    expect_names(usage_error(args), parts);
  }
}

}  // namespace
}  // namespace unetback::daemon
