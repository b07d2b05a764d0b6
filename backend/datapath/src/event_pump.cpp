#include "event_pump.hpp"

#include <algorithm>
#include <span>

namespace unetback::datapath {

std::uint32_t event_pump::drain() {
  // A pending port stays masked until unmasked, so one read takes each at
  // most once; the bound only guards against a platform that repeats one.
  std::array<evtchn_port, 16> got{};
  std::array<evtchn_port, 16> extra{};  // beyond masked_: unmasked at once
  std::size_t extra_count = 0;
  std::uint32_t n = 0;
  for (int batch = 0; batch < 4; ++batch) {
    const std::size_t k = channel_.take_pending(got);
    for (std::size_t i = 0; i < k; ++i) {
      const auto end = masked_.begin() + static_cast<std::ptrdiff_t>(masked_count_);
      if (std::find(masked_.begin(), end, got[i]) != end) {
        continue;
      }
      if (masked_count_ < masked_.size()) {
        masked_[masked_count_++] = got[i];
      } else if (extra_count < extra.size()) {
        extra[extra_count++] = got[i];  // more ports than a queue binds: never keep one masked
      } else {
        channel_.unmask(got[i]);
      }
    }
    n += static_cast<std::uint32_t>(k);
    if (k < got.size()) {
      break;
    }
  }
  channel_.unmask_all(std::span(extra).first(extra_count));
  drained_ += n;
  bump(counters_.events_received, n);
  return n;
}

void event_pump::settle(bool found_work, clock::time_point now) {
  if (drained_ == 0) {
    return;
  }
  if (found_work) {
    consecutive_spurious_ = 0;
    backoff_ = std::chrono::milliseconds{0};
  } else {
    bump(counters_.spurious_events, drained_);
    consecutive_spurious_ += drained_;
  }
  drained_ = 0;
  if (unmask_at_) {
    return;  // a backoff is running: its timer unmasks
  }
  if (consecutive_spurious_ >= storm_threshold) {
    backoff_ = backoff_.count() == 0 ? min_backoff : std::min(backoff_ * 2, max_backoff);
    unmask_at_ = now + backoff_;
    consecutive_spurious_ = 0;
    bump(counters_.event_storm_backoffs);
    return;
  }
  unmask_all();
}

void event_pump::on_timer(clock::time_point now) {
  if (unmask_at_ && now >= *unmask_at_) {
    unmask_at_.reset();
    unmask_all();
  }
}

void event_pump::unmask_all() {
  channel_.unmask_all(std::span(masked_).first(masked_count_));
  masked_count_ = 0;
}

}  // namespace unetback::datapath
