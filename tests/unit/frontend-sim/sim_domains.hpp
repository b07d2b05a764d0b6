#pragma once
// The two domains of the frontend-sim unit tests' sim worlds.

#include "unetback/rings/ids.hpp"

namespace unetback::sim::test_domains {

inline constexpr domid guest{5};
inline constexpr domid backend{0};

}  // namespace unetback::sim::test_domains
