#pragma once
// The most a queue worker may busy-poll. The adaptive window (poll_window.hpp)
// decides whether a spin is likely to save a wake-up; the budget makes the
// spinning pay for itself. A spin that ends in work (a hit) saved the worker a
// wake-up, and earns `earn_per_hit` wake-up costs of further spinning (the
// window stands for eight of them: wake_cost.hpp); without hits a worker may
// spin only the small `base` allowance. Both count within one period, and
// never above `pct` of it.
//
// Why: a guest that sends one small packet just inside the window, again and
// again, turns every spin into a hit, but each hit costs the whole gap while
// it earns two wake-ups. Over a period its spinning S obeys
// S <= base + S * 2W / gap, i.e. S <= base / (1 - 2W / gap): 1.3 % of a CPU
// at a gap just inside the window (eight wake-ups), a few percent for any gap
// of four or more, where a bare percentage let it keep half a CPU per queue.
// Traffic whose gaps are shorter than two wake-ups pays its way up to `pct`:
// there the spins cost less than the wake-ups they avoid
// (docs/performance.md, "Levers").

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace unetback::datapath {

class spin_budget {
 public:
  static constexpr std::chrono::milliseconds period{10};
  /// Spinning allowed in every period before any hit: 1 % of it.
  static constexpr std::chrono::microseconds base{100};
  /// What a hit earns, in wake-up costs.
  static constexpr int earn_per_hit = 2;

  /// pct: 0..100 of every period; 100: no bound at all (spinning need not
  /// pay). wake_cost: what a hit saves.
  spin_budget(std::uint32_t pct, std::chrono::nanoseconds wake_cost)
      : limit_(std::chrono::nanoseconds(period) * std::min<std::uint32_t>(pct, 100) / 100),
        unbounded_(pct >= 100),
        earned_per_hit_(wake_cost * earn_per_hit) {}

  /// Whether spinning may go on at `now`.
  template <typename TimePoint>
  [[nodiscard]] bool allows(TimePoint now) {
    roll(now.time_since_epoch());
    if (unbounded_) {
      return true;
    }
    return used_ < std::min(limit_, std::chrono::nanoseconds(base) + earned_);
  }

  /// `spent` was spent spinning, up to `now`.
  template <typename TimePoint>
  void charge(TimePoint now, std::chrono::nanoseconds spent) {
    roll(now.time_since_epoch());
    used_ += std::max(spent, std::chrono::nanoseconds{0});
  }

  /// A spin ended in work at `now`: it saved a wake-up.
  template <typename TimePoint>
  void on_hit(TimePoint now) {
    roll(now.time_since_epoch());
    earned_ += earned_per_hit_;
  }

 private:
  void roll(std::chrono::nanoseconds t) {
    if (t - period_start_ >= period) {
      period_start_ = t;
      used_ = std::chrono::nanoseconds{0};
      earned_ = std::chrono::nanoseconds{0};
    }
  }

  std::chrono::nanoseconds limit_;
  bool unbounded_;
  std::chrono::nanoseconds earned_per_hit_;
  std::chrono::nanoseconds period_start_{0};
  std::chrono::nanoseconds used_{0};
  std::chrono::nanoseconds earned_{0};
};

}  // namespace unetback::datapath
