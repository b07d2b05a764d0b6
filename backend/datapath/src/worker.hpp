#pragma once
// The queue worker. One step() is one bounded sweep of TX and RX with its
// notifications and event accounting; run() is the thread's loop around it:
// step again while work remains, else busy-poll (while it pays: poll_window,
// spin_budget, steal_meter) or arm the rings' event thresholds, look once
// more (ring.h's final check) and sleep in poll() on the event-channel fd,
// the stop eventfd, an operator's kick eventfd (kick_request.hpp) and (only
// while RX buffers are posted) the TAP fd. What poll() reports decides what
// the next step reads: a read that would find nothing is a system call for
// nothing, and on a PV dom0 every system call passes through the hypervisor
// (docs/performance.md, "Cost account").

#include <atomic>
#include <cstdint>

#include "event_pump.hpp"
#include "kick_request.hpp"
#include "poll_window.hpp"
#include "queue_context.hpp"
#include "rx_path.hpp"
#include "spin_budget.hpp"
#include "steal_meter.hpp"
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

/// What the worker's fds may hold (from poll(); true: look).
struct readiness {
  bool events = true;  ///< the event-channel fd may have pending ports
  bool tap = true;     ///< the TAP queue may hold frames
};

/// What one step did.
struct step_result {
  /// The rings were not touched after it; a faulting ring's indices are as
  /// they were.
  sweep_fault fault;
  bool again = false;     ///< a sweep stopped at a bound: step again at once
  bool worked = false;    ///< requests consumed or packets delivered
  bool tap_more = false;  ///< the RX sweep stopped with frames left in the TAP
};

class worker {
 public:
  /// Interval at which a frontend without feature-rx-notify is polled for
  /// RX buffers while frames wait.
  static constexpr std::chrono::milliseconds rx_poll_interval{10};

  /// `kick` (optional): operator kicks, answered when the worker polls its fds.
  worker(queue_context ctx, worker_rings rings, int stop_fd, const std::atomic<bool>& stopping,
         published_indices& published, kick_request* kick = nullptr);

  /// Runs until stopping is set (returns no fault) or a sweep finds one (a
  /// hostile frontend, a TAP gone; the rings were not touched after it).
  [[nodiscard]] sweep_fault run();

  /// One sweep of both rings at `now`, reading only what `ready` allows.
  [[nodiscard]] step_result step(clock::time_point now, readiness ready);
  /// Before sleeping: arms the rings' event thresholds and looks once more;
  /// true if work arrived meanwhile (step again instead of sleeping).
  [[nodiscard]] bool final_check();
  /// How long a sleep may last (ms, -1: until an fd is ready) at `now`.
  [[nodiscard]] int poll_timeout_ms(clock::time_point now) const;

 private:
  /// Kicks the frontend on the TX and/or RX port (once when they are shared).
  void notify(bool tx, bool rx);
  void publish();
  [[nodiscard]] bool may_spin(clock::time_point now, clock::time_point last_work);
  /// The longest busy-poll: tuning.poll_us, or what auto stands for here.
  [[nodiscard]] static std::chrono::microseconds poll_window_max(const queue_tuning& t);
  /// One busy-poll look: the rings a few times, then the fds.
  [[nodiscard]] readiness spin_look();
  /// poll() on the worker's fds for at most timeout_ms (0: just look).
  [[nodiscard]] readiness wait(int timeout_ms);

  /// Ring looks per busy-poll look before the fds are polled.
  static constexpr int spin_rounds = 64;

  queue_context ctx_;
  worker_rings rings_;
  int stop_fd_;
  const std::atomic<bool>& stopping_;
  published_indices& published_;
  kick_request* kick_;
  tx_path tx_;
  rx_path rx_;
  copy_batch copies_;  ///< the step's grant copies, both directions
  event_pump pump_;
  poll_window window_;         ///< adaptive busy-poll, at most tuning.poll_us
  spin_budget budget_;         ///< spinning paid by the wake-ups it saves, <= poll_budget_pct
  steal_meter steal_;          ///< no spinning while the hypervisor is overcommitted
  bool tx_throttled_ = false;  ///< the last TX sweep ran out of `rate` credit
  /// Busy-polling is on and the host not overcommitted: time is read precisely.
  bool spin_possible_ = true;
  bool slept_ = false;     ///< the worker slept since its last work
  bool spinning_ = false;  ///< in a busy-poll that has not found work yet
};

}  // namespace unetback::datapath
