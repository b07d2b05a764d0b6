#pragma once
// Every value of a reason enum has its own log text, none of them the
// fallback for values out of range.

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace unetback::direct::test {

/// `name(r)` for every r from `first` to `last` is distinct and not `fallback`,
/// which is what a value out of range gets.
template <typename Reason, typename Name>
void expect_distinct(Reason first, Reason last, const std::string& fallback, Name name) {
  std::set<std::string> seen;
  for (auto r = static_cast<int>(first); r <= static_cast<int>(last); ++r) {
    const std::string text = name(static_cast<Reason>(r));
    EXPECT_NE(text, fallback);
    EXPECT_TRUE(seen.insert(text).second) << "twice: " << text;
  }
  EXPECT_EQ(name(static_cast<Reason>(static_cast<int>(last) + 1)), fallback);
}

/// The same for the reasons' log texts, to_string(r).
template <typename Reason>
void expect_distinct_names(Reason first, Reason last, const std::string& fallback) {
  expect_distinct(first, last, fallback, [](Reason r) { return std::string(to_string(r)); });
}

}  // namespace unetback::direct::test
