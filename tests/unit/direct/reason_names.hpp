#pragma once
// Every value of a reason enum has its own log text, none of them the
// fallback for values out of range.

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace unetback::direct::test {

template <typename Reason>
void expect_distinct_names(Reason first, Reason last, const std::string& fallback) {
  std::set<std::string> seen;
  for (auto r = static_cast<int>(first); r <= static_cast<int>(last); ++r) {
    const std::string text = to_string(static_cast<Reason>(r));
    EXPECT_NE(text, fallback);
    EXPECT_TRUE(seen.insert(text).second) << "twice: " << text;
  }
  EXPECT_EQ(to_string(static_cast<Reason>(static_cast<int>(last) + 1)), fallback);
}

}  // namespace unetback::direct::test
