#pragma once
// The most a queue worker may busy-poll: `pct` percent of every period. The
// adaptive window (poll_window.hpp) decides whether a spin is likely to save
// a wake-up; the budget bounds what a guest can make a worker burn whatever
// its timing: a guest sending one small packet just inside the window, again
// and again, would otherwise keep a dom0 CPU at 100 % per queue.

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace unetback::datapath {

class spin_budget {
 public:
  static constexpr std::chrono::milliseconds period{10};

  /// pct: 0..100 (100: no bound).
  explicit spin_budget(std::uint32_t pct)
      : limit_(std::chrono::nanoseconds(period) * std::min<std::uint32_t>(pct, 100) / 100) {}

  /// Whether spinning may go on at `now`.
  template <typename TimePoint>
  [[nodiscard]] bool allows(TimePoint now) {
    roll(now.time_since_epoch());
    return used_ < limit_;
  }

  /// `spent` was spent spinning, up to `now`.
  template <typename TimePoint>
  void charge(TimePoint now, std::chrono::nanoseconds spent) {
    roll(now.time_since_epoch());
    used_ += std::max(spent, std::chrono::nanoseconds{0});
  }

 private:
  void roll(std::chrono::nanoseconds t) {
    if (t - period_start_ >= period) {
      period_start_ = t;
      used_ = std::chrono::nanoseconds{0};
    }
  }

  std::chrono::nanoseconds limit_;
  std::chrono::nanoseconds period_start_{0};
  std::chrono::nanoseconds used_{0};
};

}  // namespace unetback::datapath
