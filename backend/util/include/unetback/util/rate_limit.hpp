#pragma once
// A token bucket for log lines a guest can trigger: a hostile frontend must
// not be able to flood the host's journal (docs/security.md, "Log lines").
// UNETBACK_LOG_RATELIMITED keeps one bucket per call site for the whole
// daemon; lines about one vif use UNETBACK_LOG_LIMITED (log_limits.hpp) so
// that one guest's flood cannot silence another vif's lines.

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <utility>

namespace unetback::util {

/// Lines a bucket allows at once, and how fast it refills: 10 lines, then
/// one per 500 ms (at most 10 per 5 s).
inline constexpr std::uint32_t log_burst = 10;
inline constexpr std::chrono::milliseconds log_refill{500};

/// Allows `burst` events, then one per `interval`. Lock-free; safe from any
/// thread. Counts what it suppressed so the next allowed line can say so.
class rate_limit {
 public:
  constexpr rate_limit(std::uint32_t burst, std::chrono::milliseconds interval)
      : burst_(burst), interval_ns_(std::chrono::nanoseconds(interval).count()) {}

  /// True if this event may be logged; `suppressed` receives how many were
  /// dropped since the last allowed one.
  bool allow(std::uint64_t& suppressed) {
    const std::int64_t now = now_ns();
    std::int64_t window = window_start_.load(std::memory_order_relaxed);
    if (now - window >= interval_ns_ * static_cast<std::int64_t>(burst_)) {
      if (window_start_.compare_exchange_strong(window, now, std::memory_order_relaxed)) {
        used_.store(0, std::memory_order_relaxed);
      }
    }
    if (used_.fetch_add(1, std::memory_order_relaxed) < burst_) {
      suppressed = suppressed_.exchange(0, std::memory_order_relaxed);
      return true;
    }
    suppressed_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

 private:
  static std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  std::uint32_t burst_;
  std::int64_t interval_ns_;
  std::atomic<std::int64_t> window_start_{0};
  std::atomic<std::uint32_t> used_{0};
  std::atomic<std::uint64_t> suppressed_{0};
};

namespace detail {

/// An allowed line, after a note of how many like it were suppressed.
template <typename... Args>
void log_allowed(spdlog::level::level_enum level, std::uint64_t suppressed,
                 spdlog::format_string_t<Args...> format, Args&&... args) {
  if (suppressed > 0) {
    spdlog::log(level, "({} similar messages suppressed)", suppressed);
  }
  spdlog::log(level, format, std::forward<Args>(args)...);
}

}  // namespace detail

}  // namespace unetback::util

/// Logs at most 10 lines per 5 s from this call site, daemon-wide. For lines
/// not tied to one vif (a platform call, the watchdog).
#define UNETBACK_LOG_RATELIMITED(level, ...)                                              \
  do {                                                                                    \
    static ::unetback::util::rate_limit unetback_rl_{::unetback::util::log_burst,         \
                                                     ::unetback::util::log_refill};       \
    std::uint64_t unetback_rl_suppressed_ = 0;                                            \
    if (unetback_rl_.allow(unetback_rl_suppressed_)) {                                    \
      ::unetback::util::detail::log_allowed(level, unetback_rl_suppressed_, __VA_ARGS__); \
    }                                                                                     \
  } while (false)
