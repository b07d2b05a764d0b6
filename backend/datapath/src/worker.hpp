#pragma once
// The queue worker's loop: bounded sweeps of TX and RX, notifications, the
// final-check idiom, adaptive busy-polling (poll_window.hpp), then poll() on the event-channel fd,
// the stop eventfd and (only while RX buffers are posted) the TAP fd.

#include <atomic>
#include <cstdint>

#include "event_pump.hpp"
#include "poll_window.hpp"
#include "queue_context.hpp"
#include "rx_path.hpp"
#include "tx_path.hpp"

namespace unetback::datapath {

/// Private ring indices the worker publishes for ring_dump() (other threads
/// must not read the worker's back_ring objects).
struct published_indices {
  std::atomic<std::uint32_t> tx_req_cons{0};
  std::atomic<std::uint32_t> tx_rsp_prod_pvt{0};
  std::atomic<std::uint32_t> rx_req_cons{0};
  std::atomic<std::uint32_t> rx_rsp_prod_pvt{0};
};

/// The rings and ports a worker serves.
struct worker_rings {
  rings::tx_back_ring& tx;
  rings::rx_back_ring& rx;
  platform::event_channel& channel;
  evtchn_port tx_port;  ///< local port for TX kicks (== rx_port when not split)
  evtchn_port rx_port;
};

class worker {
 public:
  /// Interval at which a frontend without feature-rx-notify is polled for
  /// RX buffers while frames wait.
  static constexpr std::chrono::milliseconds rx_poll_interval{10};

  worker(queue_context ctx, worker_rings rings, int stop_fd, const std::atomic<bool>& stopping,
         published_indices& published);

  /// Runs until stopping is set (returns nullptr) or the frontend proves
  /// hostile (returns the reason; the rings were not touched after it).
  [[nodiscard]] const char* run();

 private:
  void notify(const tx_sweep_result& tx, const rx_sweep_result& rx);
  void publish();
  [[nodiscard]] bool busy_polling(clock::time_point now, clock::time_point last_work) const;
  [[nodiscard]] int poll_timeout_ms(clock::time_point now, bool tx_throttled) const;
  void sleep(bool tx_throttled);

  queue_context ctx_;
  worker_rings rings_;
  int stop_fd_;
  const std::atomic<bool>& stopping_;
  published_indices& published_;
  tx_path tx_;
  rx_path rx_;
  event_pump pump_;
  poll_window window_;  ///< adaptive busy-poll, at most tuning.poll_us
  bool slept_ = false;  ///< the worker slept since its last work
};

}  // namespace unetback::datapath
