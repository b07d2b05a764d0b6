// Each setting is written in several places by hand: the command line
// (options.cpp), the file's parser (config_file.cpp), unetbackd(8),
// unetback.toml(5) and the example configuration. This test fails when they
// disagree: a key the example shows that the parser refuses, a key or a flag
// one of the documents lacks, or a documented one that no longer exists.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "unetback/daemon/options.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::daemon {
namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(UNETBACK_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in.good()) << relative;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Every match of `re`'s first group in `text`, with man(7)'s `\-` as `-`.
std::set<std::string> matches(const std::string& text, const std::regex& re) {
  std::set<std::string> found;
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it) {
    found.insert(std::regex_replace((*it)[1].str(), std::regex(R"(\\-)"), "-"));
  }
  return found;
}

/// The example's settings: section -> (key -> the value shown).
using example_settings = std::map<std::string, std::map<std::string, std::string>>;

example_settings example() {
  example_settings out;
  std::string section;
  const std::regex section_line(R"(^#?\[(.*)\]$)");
  const std::regex key_line(R"(^#?([a-z][a-z-]*) = (.*)$)");
  std::istringstream lines(read_source("tools/systemd/unetback.toml.example"));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, section_line)) {
      section = m[1];
    } else if (std::regex_match(line, m, key_line)) {
      out[section][m[1]] = m[2];
    }
  }
  return out;
}

std::set<std::string> keys_of(const example_settings& e, const std::string& section) {
  std::set<std::string> keys;
  for (const auto& [k, v] : e.at(section)) {
    keys.insert(k);
  }
  return keys;
}

/// `unetbackd --help`.
std::string help_text() {
  const auto r = parse_command_line({"--help"});
  const auto* e = std::get_if<early_exit>(&r);
  EXPECT_NE(e, nullptr);
  return e == nullptr ? std::string() : e->message;
}

/// The options `unetbackd --help` lists, each with its long names (an
/// option may have aliases: "--no-wait-hotplug,--no-wait-for-hotplug").
std::vector<std::set<std::string>> help_options() {
  std::vector<std::set<std::string>> options;
  const std::string help = help_text();
  const std::regex names(R"((--[a-z][a-z-]*(?:,--[a-z][a-z-]*)*))");
  const std::regex name(R"(--([a-z][a-z-]*))");
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    // An option's line starts with its names; "Excludes: --x" later on it is not one.
    if (std::regex_search(line, m, names) &&
        line.find_first_not_of(" -h,") >= static_cast<std::size_t>(m.position(0))) {
      options.push_back(matches(m[1].str(), name));
    }
  }
  return options;
}

std::set<std::string> help_flags() {
  std::set<std::string> flags;
  for (const auto& names : help_options()) {
    flags.insert(names.begin(), names.end());
  }
  return flags;
}

/// The text of a man page's section, from ".SH NAME" to the next ".SH".
std::string man_section(const std::string& page, const std::string& title) {
  const std::string head = ".SH " + title + "\n";
  const std::size_t from = page.find(head);
  EXPECT_NE(from, std::string::npos) << title;
  const std::size_t to = page.find("\n.SH ", from + head.size());
  return from == std::string::npos ? std::string() : page.substr(from, to - from);
}

class SettingsDocs : public ::testing::Test {
 protected:
  /// Whether the parser takes `key = value` in `section`.
  bool parser_accepts(const std::string& section, const std::string& key,
                      const std::string& value) {
    const std::string file = dir_ + "/unetback.toml";
    std::ofstream(file, std::ios::trunc) << "[" << section << "]\n"
                                         << key << " = " << value << "\n";
    const auto r = parse_command_line({"--config", file});
    if (const auto* e = std::get_if<early_exit>(&r)) {
      ADD_FAILURE() << "[" << section << "] " << key << " = " << value << ": " << e->message;
      return false;
    }
    return true;
  }

  test_support::temp_dir tmp_{"unetback-settings-"};
  std::string dir_ = tmp_.path().string();
};

TEST_F(SettingsDocs, TheParserTakesEveryValueTheExampleShows) {
  const example_settings e = example();
  ASSERT_GT(e.count("daemon"), 0U);
  ASSERT_GT(e.at("daemon").size(), 10U);  // the example is read at all
  for (const auto& [section, keys] : e) {
    for (const auto& [key, value] : keys) {
      EXPECT_TRUE(parser_accepts(section, key, value));
    }
  }
}

TEST_F(SettingsDocs, TheFileManPageAndTheExampleListTheSameKeys) {
  const std::set<std::string> documented =
      matches(read_source("docs/man/unetback.toml.5"), std::regex(R"(([a-z][a-z\\-]*) " = )"));
  EXPECT_EQ(documented, keys_of(example(), "daemon"));
}

TEST_F(SettingsDocs, EveryKeyIsAFlagOfTheSameName) {
  const std::set<std::string> flags = help_flags();
  for (const std::string& key : keys_of(example(), "daemon")) {
    EXPECT_EQ(flags.count(key), 1U) << "no --" << key;
  }
}

TEST_F(SettingsDocs, TheDaemonManPageDocumentsExactlyTheOptionsOfHelp) {
  const std::vector<std::set<std::string>> options = help_options();
  ASSERT_GT(options.size(), 10U);  // the help is read at all
  const std::string page = read_source("docs/man/unetbackd.8");
  const std::regex flag(R"(\\-\\-([a-z][a-z\\-]*))");
  const std::set<std::string> synopsis = matches(man_section(page, "SYNOPSIS"), flag);
  const std::set<std::string> described = matches(man_section(page, "OPTIONS"), flag);
  for (const auto& names : options) {
    const auto in = [&names](const std::set<std::string>& documented) {
      return std::any_of(names.begin(), names.end(),
                         [&documented](const std::string& n) { return documented.count(n) > 0; });
    };
    EXPECT_TRUE(in(synopsis)) << "not in SYNOPSIS: --" << *names.begin();
    EXPECT_TRUE(in(described)) << "not in OPTIONS: --" << *names.begin();
  }
  const std::set<std::string> flags = help_flags();
  for (const auto& documented : {synopsis, described}) {
    for (const std::string& f : documented) {
      EXPECT_EQ(flags.count(f), 1U) << "documented, but no such option: --" << f;
    }
  }
}

}  // namespace
}  // namespace unetback::daemon
