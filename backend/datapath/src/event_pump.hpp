#pragma once
// Event-channel handling for one worker: drains pending ports (each one is
// masked by the platform until unmasked), counts events and spurious events
// (events after which no ring had new requests), and unmasks. A storm of
// spurious events delays the unmask with an exponential backoff, so a guest
// kicking in a loop cannot keep the worker spinning (XSA-332, "late EOI").

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

#include "queue_context.hpp"
#include "unetback/platform/event_channel.hpp"

namespace unetback::datapath {

class event_pump {
 public:
  /// Consecutive spurious events that start a backoff.
  static constexpr std::uint32_t storm_threshold = 32;
  static constexpr std::chrono::milliseconds min_backoff{1};
  static constexpr std::chrono::milliseconds max_backoff{64};

  event_pump(platform::event_channel& channel, queue_counters& counters)
      : channel_(channel), counters_(counters) {}

  /// Takes every pending port; returns how many events arrived.
  std::uint32_t drain();
  /// After the sweep that followed drain(): accounts the events as useful or
  /// spurious and unmasks their ports now, or at unmask_deadline() in a storm.
  void settle(bool found_work, clock::time_point now);
  /// Unmasks delayed ports whose backoff has expired.
  void on_timer(clock::time_point now);
  /// When delayed ports get unmasked, if any are.
  [[nodiscard]] std::optional<clock::time_point> unmask_deadline() const { return unmask_at_; }

 private:
  void unmask_all();

  platform::event_channel& channel_;
  queue_counters& counters_;
  std::array<evtchn_port, 8> masked_{};
  std::size_t masked_count_ = 0;
  std::uint32_t drained_ = 0;
  std::uint32_t consecutive_spurious_ = 0;
  std::chrono::milliseconds backoff_{0};
  std::optional<clock::time_point> unmask_at_;
};

}  // namespace unetback::datapath
