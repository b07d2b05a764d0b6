#include "event_pump.hpp"

#include <algorithm>

namespace unetback::datapath {

std::uint32_t event_pump::drain() {
  std::uint32_t n = 0;
  while (const auto port = channel_.pending()) {
    ++n;
    const auto end = masked_.begin() + static_cast<std::ptrdiff_t>(masked_count_);
    if (std::find(masked_.begin(), end, *port) != end) {
      continue;
    }
    if (masked_count_ == masked_.size()) {
      channel_.unmask(*port);  // more ports than a queue binds: never keep one masked
      continue;
    }
    masked_[masked_count_++] = *port;
  }
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
  for (std::size_t i = 0; i < masked_count_; ++i) {
    channel_.unmask(masked_[i]);
  }
  masked_count_ = 0;
}

}  // namespace unetback::datapath
