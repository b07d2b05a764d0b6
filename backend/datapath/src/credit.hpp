#pragma once
// The `rate` credit scheduler for guest TX (docs/protocol.md §1.9; Linux
// tx_credit_exceeded / tx_add_credit): every `interval` the queue gains
// `bytes` of credit, capped at max(bytes, 128 KiB) so a maximum-size packet
// can always pass. Sizes come from private copies of the requests only.

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace unetback::datapath {

class credit_bucket {
 public:
  using clock = std::chrono::steady_clock;
  /// Linux: a burst of at least 128 KiB, so a 64 KiB packet always fits.
  static constexpr std::uint64_t min_burst = 128 * 1024;

  /// `bytes` == 0 or `interval` == 0: unlimited.
  credit_bucket(std::uint64_t bytes, std::chrono::microseconds interval)
      : bytes_(bytes), interval_(interval), remaining_(bytes) {}

  [[nodiscard]] bool limited() const { return bytes_ != 0 && interval_.count() != 0; }

  /// Charges `size` bytes if the credit allows it now; false means "wait until
  /// next_refill()" (the request stays unconsumed).
  bool consume(std::uint32_t size, clock::time_point now) {
    if (!limited()) {
      return true;
    }
    refill(now);
    if (size > remaining_) {
      return false;
    }
    remaining_ -= size;
    return true;
  }

  /// When more credit arrives.
  [[nodiscard]] clock::time_point next_refill() const { return next_refill_; }

 private:
  void refill(clock::time_point now) {
    if (now < next_refill_) {
      return;
    }
    const std::uint64_t max_burst = std::max(min_burst, bytes_);
    remaining_ = std::min(remaining_ + bytes_, max_burst);
    next_refill_ = now + interval_;
  }

  std::uint64_t bytes_;
  std::chrono::microseconds interval_;
  std::uint64_t remaining_;
  clock::time_point next_refill_{};
};

}  // namespace unetback::datapath
