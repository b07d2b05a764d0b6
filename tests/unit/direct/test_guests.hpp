#pragma once
// The guests of the direct path's tests, by the MACs of test_frames.hpp's
// Ethernet header: destination 02:00:00:00:00:01 (B), source 02:00:00:00:00:02 (A).

#include "unetback/tap/mac.hpp"

namespace unetback::direct::test {

inline constexpr tap::mac_address guest_a{0x02, 0, 0, 0, 0, 0x02};
inline constexpr tap::mac_address guest_b{0x02, 0, 0, 0, 0, 0x01};
inline constexpr tap::mac_address guest_c{0x02, 0, 0, 0, 0, 0x03};

}  // namespace unetback::direct::test
