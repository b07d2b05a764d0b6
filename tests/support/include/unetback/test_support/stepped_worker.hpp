#pragma once
// A queue worker without its thread. What queue.cpp's thread does in a loop
// (worker::step, then the final check before sleeping), a test or a fuzzer
// does here one step at a time, at times it chooses, asserting in between:
// "the worker did everything it could and the frame is still in the TAP" is
// a statement about a settled worker, not about a sleep of 50 ms.
//
// Set up like queue::impl (rings mapped from the frontend's grants, ports
// bound, journals and counters in anonymous queue_state) but never resumes,
// never kicks and never starts a thread. Needs the data path's private
// headers (backend/datapath/src): the worker is not public API.

#include <chrono>
#include <memory>
#include <optional>

#include "queue_state.hpp"
#include "thread_util.hpp"
#include "unetback/datapath/queue_config.hpp"
#include "unetback/datapath/vif_shared_state.hpp"
#include "unetback/platform/platform.hpp"
#include "worker.hpp"

namespace unetback::test_support {

class stepped_worker {
 public:
  using clock = datapath::clock;

  /// Opens its handles from `platform`, maps `config`'s rings and binds its
  /// port(s) (throws std::system_error / std::runtime_error as queue::start).
  stepped_worker(platform::platform& platform, const datapath::queue_config& config,
                 std::unique_ptr<platform::frame_port> tap,
                 std::shared_ptr<datapath::vif_shared_state> shared);
  ~stepped_worker();
  stepped_worker(const stepped_worker&) = delete;
  stepped_worker& operator=(const stepped_worker&) = delete;

  /// One worker step at `now`, reading what its fds report ready (a poll()
  /// with no timeout, as the thread's busy-poll look does).
  datapath::step_result step(clock::time_point now);
  /// Steps until the worker would sleep: no sweep stopped at a bound and the
  /// final check (event thresholds armed) found nothing. Returns the fault
  /// that stopped it, if one did; nullopt also when `max_steps` ran out
  /// (settled() then says false).
  std::optional<datapath::sweep_fault> settle(clock::time_point now, int max_steps = 1000);
  /// Whether the last settle() ended with the worker ready to sleep.
  [[nodiscard]] bool settled() const { return settled_; }
  /// Before sleeping: arms the event thresholds and looks once more
  /// (worker::final_check); true if work arrived meanwhile.
  bool final_check();
  /// How long the thread would sleep now (worker::poll_timeout_ms).
  [[nodiscard]] int poll_timeout_ms(clock::time_point now) const;

  [[nodiscard]] datapath::queue_counters& counters() { return state_.data().counters; }
  [[nodiscard]] rings::tx_back_ring& tx_ring() { return tx_->ring; }
  [[nodiscard]] rings::rx_back_ring& rx_ring() { return rx_->ring; }
  [[nodiscard]] platform::event_channel& channel() { return *channel_; }
  [[nodiscard]] platform::frame_port& tap() { return *tap_; }

 private:
  datapath::queue_config config_;
  std::unique_ptr<platform::frame_port> tap_;
  std::shared_ptr<datapath::vif_shared_state> shared_;
  datapath::queue_state state_;
  datapath::tx_journal tx_responses_;
  datapath::rx_journal rx_responses_;
  std::unique_ptr<platform::grant_table> grants_;
  std::unique_ptr<platform::event_channel> channel_;
  std::optional<datapath::mapped_ring<rings::tx_back_ring>> tx_;
  std::optional<datapath::mapped_ring<rings::rx_back_ring>> rx_;
  evtchn_port tx_port_;
  evtchn_port rx_port_;
  std::atomic<bool> stopping_{false};
  datapath::published_indices published_;
  std::unique_ptr<datapath::worker> worker_;
  bool settled_ = false;
};

}  // namespace unetback::test_support
