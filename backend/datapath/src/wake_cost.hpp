#pragma once
// What waking a sleeping thread costs on this host: the longest a busy-poll
// may be worth (poll-us = auto). Measured once per daemon, at the first
// queue: a short ping-pong between two threads over eventfds, the median
// one-way latency. On hardware it is microseconds; in a nested or emulated
// dom0 (the lab's QEMU TCG) hundreds of them, and the guests' answers are
// as much slower, so a fixed window either never covers a round trip there
// or spins far too long on hardware.

#include <chrono>

namespace unetback::datapath {

/// The median one-way wake-up latency measured at the first call (later
/// calls return it). Never below 1 us.
[[nodiscard]] std::chrono::microseconds wake_cost();

/// The busy-poll window poll-us = auto stands for: `wake_cost_multiple`
/// wake-ups, within [min, max]. A guest's answer to what the worker just
/// delivered takes its own wake-ups (its kernel's, then its application's)
/// plus its work: eight covers that where the work is a few wake-ups' worth.
inline constexpr int wake_cost_multiple = 8;
inline constexpr std::chrono::microseconds auto_poll_min{50};
inline constexpr std::chrono::microseconds auto_poll_max{2000};
[[nodiscard]] std::chrono::microseconds auto_poll_window(std::chrono::microseconds wake);

}  // namespace unetback::datapath
