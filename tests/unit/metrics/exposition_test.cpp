// The text format's escaping and its HELP/TYPE lines.
#include "unetback/metrics/exposition.hpp"

#include <gtest/gtest.h>

namespace unetback::metrics {
namespace {

TEST(Exposition, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(escape_label_value(R"(a\b)"), R"(a\\b)");
  EXPECT_EQ(escape_label_value(R"(say "hi")"), R"(say \"hi\")");
  EXPECT_EQ(escape_label_value("two\nlines"), R"(two\nlines)");
  EXPECT_EQ(escape_label_value("plain vif1.0"), "plain vif1.0");
}

TEST(Exposition, HelpEscapesBackslashAndNewlineButNotQuotes) {
  EXPECT_EQ(escape_help("a \"quoted\" \\ word\nnext"), R"(a "quoted" \\ word\nnext)");
}

TEST(Exposition, FamilyThenSamplesWithEscapedLabels) {
  exposition out;
  out.family("unetback_x_total", metric_type::counter, "Things.\nMore");
  out.sample("unetback_x_total", {{"vif", "vif1.0"}, {"reason", "a\"b\\c\nd"}}, std::uint64_t{42});
  out.family("unetback_y", metric_type::gauge, "Level.");
  out.sample("unetback_y", {}, std::uint64_t{0});
  out.sample("unetback_y", {{"q", "1"}}, 0.25);
  EXPECT_EQ(out.text(),
            "# HELP unetback_x_total Things.\\nMore\n"
            "# TYPE unetback_x_total counter\n"
            "unetback_x_total{vif=\"vif1.0\",reason=\"a\\\"b\\\\c\\nd\"} 42\n"
            "# HELP unetback_y Level.\n"
            "# TYPE unetback_y gauge\n"
            "unetback_y 0\n"
            "unetback_y{q=\"1\"} 0.25\n");
}

TEST(Exposition, LargeCountersAreExact) {
  exposition out;
  out.sample("c", {}, std::uint64_t{18446744073709551615ULL});
  EXPECT_EQ(out.text(), "c 18446744073709551615\n");
}

}  // namespace
}  // namespace unetback::metrics
