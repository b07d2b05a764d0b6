#pragma once
// The `rate` credit of a vif (docs/protocol.md §1.9): `bytes` per `interval`
// for the guest's TX over all its queues together, as an operator reads
// `rate=10Mb/s` (Linux keeps a credit per queue, so a 4-queue guest gets 4
// times its rate). Credit accrues continuously (bytes * elapsed / interval),
// capped at max(bytes, 128 KiB) so a maximum-size packet always fits (Linux
// tx_add_credit): a packet waits only as long as its own bytes take, not for
// the next whole interval, so one TCP stream can use the whole rate.
// Lock-free: each queue's worker charges it with compare-and-swap; the rate
// may change while they do (the toolstack rewrites `rate`).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace unetback::datapath {

namespace detail {
// bytes x nanoseconds overflows 64 bits for a `rate` of many GB per interval.
__extension__ using credit_u128 = unsigned __int128;
}  // namespace detail

class vif_credit {
 public:
  using clock = std::chrono::steady_clock;
  /// Linux: a burst of at least 128 KiB, so a 64 KiB packet always fits.
  static constexpr std::uint64_t min_burst = std::uint64_t{128} * 1024;

  /// `bytes` == 0 or `interval` == 0: unlimited. Starts with a full burst at `now`.
  void set_rate(std::uint64_t bytes, std::chrono::microseconds interval,
                clock::time_point now = clock::now()) {
    const bool on = bytes != 0 && interval.count() > 0;
    bytes_.store(on ? bytes : 0, std::memory_order_relaxed);
    interval_ns_.store(on ? std::chrono::nanoseconds(interval).count() : 0,
                       std::memory_order_relaxed);
    tokens_.store(static_cast<std::int64_t>(burst(bytes)), std::memory_order_relaxed);
    last_ns_.store(ns(now), std::memory_order_relaxed);
  }

  [[nodiscard]] bool limited() const { return bytes_.load(std::memory_order_relaxed) != 0; }

  /// Charges `size` bytes if the credit allows it now; false means "wait
  /// until ready_at(size)" (the request stays unconsumed).
  bool consume(std::uint32_t size, clock::time_point now) {
    if (!limited()) {
      return true;
    }
    refill(ns(now));
    std::int64_t have = tokens_.load(std::memory_order_relaxed);
    while (have >= static_cast<std::int64_t>(size)) {
      if (tokens_.compare_exchange_weak(have, have - size, std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

  /// When `size` bytes of credit will have accrued (at least 1 ms from now:
  /// the worker sleeps in poll(), whose timeout is in milliseconds).
  [[nodiscard]] clock::time_point ready_at(std::uint32_t size, clock::time_point now) const {
    const std::uint64_t bytes = bytes_.load(std::memory_order_relaxed);
    if (bytes == 0) {
      return now;
    }
    const std::int64_t missing =
        static_cast<std::int64_t>(size) - tokens_.load(std::memory_order_relaxed);
    const auto wait_ns = static_cast<std::int64_t>(
        static_cast<detail::credit_u128>(std::max<std::int64_t>(missing, 0)) *
        static_cast<std::uint64_t>(interval_ns_.load(std::memory_order_relaxed)) / bytes);
    return now + std::max<std::chrono::nanoseconds>(std::chrono::nanoseconds(wait_ns),
                                                    std::chrono::milliseconds(1));
  }

 private:
  static std::uint64_t burst(std::uint64_t bytes) { return std::max(min_burst, bytes); }
  static std::int64_t ns(clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }

  // Adds what accrued since the last refill; one worker wins each refill.
  void refill(std::int64_t now_ns) {
    std::int64_t last = last_ns_.load(std::memory_order_relaxed);
    const std::int64_t elapsed = now_ns - last;
    const std::uint64_t bytes = bytes_.load(std::memory_order_relaxed);
    const std::int64_t interval = interval_ns_.load(std::memory_order_relaxed);
    if (elapsed <= 0 || interval <= 0) {
      return;
    }
    const std::uint64_t cap = burst(bytes);
    const auto gained = static_cast<std::uint64_t>(std::min<detail::credit_u128>(
        static_cast<detail::credit_u128>(bytes) * static_cast<std::uint64_t>(elapsed) /
            static_cast<std::uint64_t>(interval),
        cap));
    if (gained == 0 || !last_ns_.compare_exchange_strong(last, now_ns, std::memory_order_relaxed)) {
      return;  // too little to count yet (keep the time), or another worker refilled
    }
    std::int64_t have = tokens_.load(std::memory_order_relaxed);
    std::int64_t want = 0;
    do {
      want = std::min<std::int64_t>(have + static_cast<std::int64_t>(gained),
                                    static_cast<std::int64_t>(cap));
    } while (!tokens_.compare_exchange_weak(have, want, std::memory_order_relaxed));
  }

  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::int64_t> interval_ns_{0};
  std::atomic<std::int64_t> tokens_{0};
  std::atomic<std::int64_t> last_ns_{0};
};

}  // namespace unetback::datapath
