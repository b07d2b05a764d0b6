#include "worker.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>
#include <system_error>

#include "thread_util.hpp"
#include "wake_cost.hpp"

namespace unetback::datapath {

worker::worker(queue_context ctx, worker_rings rings, int stop_fd,
               const std::atomic<bool>& stopping, published_indices& published, kick_request* kick)
    : ctx_(ctx),
      rings_(rings),
      stop_fd_(stop_fd),
      stopping_(stopping),
      published_(published),
      kick_(kick),
      tx_(ctx, rings.tx),
      rx_(ctx, rings.rx),
      pump_(rings.channel, ctx.counters),
      window_(poll_window_max(ctx.config.tuning)),
      // A hit saves one wake-up; the window stands for wake_cost_multiple of
      // them, whether auto measured them or the operator set it.
      budget_(ctx.config.tuning.poll_budget_pct, window_.max() / wake_cost_multiple),
      steal_(ctx.config.tuning.poll_max_steal_pct) {}

sweep_fault worker::run() {
  readiness ready;  // the first step looks at everything
  clock::time_point last_work = clock::now();
  std::optional<clock::time_point> spin_from;  // the previous iteration was a spin
  while (!stopping_.load(std::memory_order_acquire)) {
    // The precise clock only while busy-polling may pay: its windows are
    // microseconds, every other timer here is milliseconds.
    const clock::time_point now = spin_possible_ ? clock::now() : coarse_now();
    if (spin_from) {
      budget_.charge(now, now - *spin_from);
      bump(ctx_.counters.poll_us,
           static_cast<std::uint64_t>(
               std::chrono::duration_cast<std::chrono::microseconds>(now - *spin_from).count()));
      spin_from.reset();
    }
    const step_result r = step(now, ready);
    if (r.fault) {
      return r.fault;
    }
    if (r.worked) {
      if (spinning_) {
        bump(ctx_.counters.poll_hits);
        budget_.on_hit(now);
        spinning_ = false;
      }
      if (slept_) {
        window_.on_wake_with_work(now - last_work);  // a wake-up a longer spin could have saved?
        slept_ = false;
      }
      last_work = now;
    }
    if (r.again) {
      ready = readiness{false, r.tap_more};  // bounded sweeps: go round again
      continue;
    }
    if (may_spin(now, last_work)) {
      if (!spinning_) {
        bump(ctx_.counters.poll_spins);
        spinning_ = true;
      }
      spin_from = now;
      ready = spin_look();
      continue;
    }
    spinning_ = false;
    if (final_check()) {
      ready = readiness{false, false};
      continue;
    }
    ready = wait(poll_timeout_ms(now));
    slept_ = true;
  }
  return {};
}

step_result worker::step(clock::time_point now, readiness ready) {
  pump_.on_timer(now);
  if (ready.events) {
    (void)pump_.drain();
  }
  // TX first, to the end: the frames it writes to the TAP run the host's
  // stack in this thread, and what that sends back (the ACKs of a guest's
  // stream, the data a host sender had waited to send) is then in the TAP
  // for the RX sweep to take in the same step. One grant-copy call for both
  // directions would need the TAP reads before the writes, and measured
  // worse for that (docs/performance.md, "Levers").
  copies_.clear();
  const tx_sweep_result tx_planned = tx_.plan(now, copies_);
  if (tx_planned.fault) {
    return step_result{.fault = tx_planned.fault};
  }
  copies_.issue(ctx_.grants, ctx_.counters);
  const tx_sweep_result tx = tx_.complete(copies_);
  if (tx.fault) {
    notify(tx.notify, false);
    return step_result{.fault = tx.fault};  // answered; the TAP is gone
  }
  copies_.clear();
  const rx_sweep_result rx_planned = rx_.plan(now, ready.tap, copies_);
  if (rx_planned.fault) {
    notify(tx.notify, false);
    return step_result{.fault = rx_planned.fault};
  }
  copies_.issue(ctx_.grants, ctx_.counters);
  const rx_sweep_result rx = rx_.complete(copies_);
  notify(tx.notify, rx.notify);
  publish();
  tx_throttled_ = tx.throttled;
  step_result r;
  r.worked = tx.consumed > 0 || rx.delivered > 0;
  // Events are judged by real work since the last judged drain: indices a
  // guest moves without anything to do do not keep the storm backoff away.
  pump_.settle(r.worked || rx.slots_arrived, now);
  r.tap_more = rx.more;
  r.again = tx.more || rx.more;
  return r;
}

bool worker::final_check() {
  // ring.h RING_FINAL_CHECK_FOR_REQUESTS: arm the event thresholds, then look
  // once more before sleeping.
  if (!tx_throttled_ && tx_.final_check()) {
    return true;
  }
  return rx_.final_check();
}

void worker::notify(bool tx, bool rx) {
  const bool shared_port = rings_.tx_port == rings_.rx_port;
  if (tx) {
    rings_.channel.notify(rings_.tx_port);
    bump(ctx_.counters.notify_sent);
  }
  if (rx && !(shared_port && tx)) {
    rings_.channel.notify(rings_.rx_port);
    bump(ctx_.counters.notify_sent);
  }
}

void worker::publish() {
  published_.tx_req_cons.store(rings_.tx.req_cons(), std::memory_order_relaxed);
  published_.tx_rsp_prod_pvt.store(rings_.tx.rsp_prod_pvt(), std::memory_order_relaxed);
  published_.rx_req_cons.store(rings_.rx.req_cons(), std::memory_order_relaxed);
  published_.rx_rsp_prod_pvt.store(rings_.rx.rsp_prod_pvt(), std::memory_order_relaxed);
}

std::chrono::microseconds worker::poll_window_max(const queue_tuning& t) {
  if (t.poll_us == queue_tuning::poll_us_auto) {
    return auto_poll_window(wake_cost());
  }
  return std::chrono::microseconds(t.poll_us);
}

bool worker::may_spin(clock::time_point now, clock::time_point last_work) {
  if (window_.max().count() == 0) {
    spin_possible_ = false;
    return false;
  }
  const std::chrono::microseconds window = window_.window();
  const bool wanted = window.count() > 0 && now - last_work < window;
  spin_possible_ = !steal_.contended(now);
  if (!spin_possible_) {
    if (wanted) {
      bump(ctx_.counters.poll_refused_steal);
    }
    return false;
  }
  if (wanted && !budget_.allows(now)) {
    bump(ctx_.counters.poll_refused_budget);
    return false;
  }
  return wanted;
}

int worker::poll_timeout_ms(clock::time_point now) const {
  std::optional<clock::time_point> deadline = pump_.unmask_deadline();
  const auto earliest = [&deadline](clock::time_point t) {
    deadline = deadline ? std::min(*deadline, t) : t;
  };
  if (tx_throttled_) {
    earliest(tx_.credit_ready_at(now));
  }
  if (const auto stall = rx_.stall_deadline()) {
    earliest(*stall);
  }
  if (rx_.waiting_for_slots() && !ctx_.config.features.rx_notify) {
    earliest(now + rx_poll_interval);  // no kicks for new RX buffers: poll the ring
  }
  if (!deadline) {
    return -1;
  }
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(*deadline - now).count();
  return static_cast<int>(std::clamp<std::int64_t>(ms, 0, 60'000));
}

readiness worker::spin_look() {
  // The guest's requests show in its rings without a kick (req_event is not
  // re-armed while spinning) and without a system call; frames in the TAP
  // and pending events need one (poll() with no timeout), so that comes last.
  for (int i = 0; i < spin_rounds; ++i) {
    if (tx_.has_requests() || rx_.buffers_arrived()) {
      return readiness{false, false};
    }
    cpu_relax();
  }
  return wait(0);
}

readiness worker::wait(int timeout_ms) {
  std::array<pollfd, 4> fds{};
  fds[0] = pollfd{stop_fd_, POLLIN, 0};
  nfds_t count = 1;
  // During an event-storm backoff (XSA-332) the storming port stays masked
  // until the deadline, which bounds the timeout: do not wake for the
  // event-channel fd meanwhile (a masked port raises nothing on Xen; in the
  // sim a guest could keep the fd readable and make every doorbell a loop).
  int events_at = -1;
  int tap_at = -1;
  if (!pump_.unmask_deadline()) {
    events_at = static_cast<int>(count);
    fds[count++] = pollfd{rings_.channel.fd(), POLLIN, 0};
  }
  if (rx_.wants_tap()) {
    tap_at = static_cast<int>(count);
    fds[count++] = pollfd{ctx_.tap.fd(), POLLIN, 0};
  }
  int kick_at = -1;
  if (kick_ != nullptr) {
    kick_at = static_cast<int>(count);
    fds[count++] = pollfd{kick_->fd(), POLLIN, 0};
  }
  const int rc = ::poll(fds.data(), count, timeout_ms);
  if (rc < 0) {
    if (errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    return readiness{};  // interrupted: look at everything
  }
  const auto ready_at = [&fds](int i) {
    return i >= 0 && (fds[static_cast<std::size_t>(i)].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
  };
  if (ready_at(kick_at) && kick_->take()) {
    notify(true, true);         // every port of the queue, once
    bump(ctx_.counters.kicks);  // after: a kick counted has been delivered
    return readiness{};         // look at everything, as after an event
  }
  return readiness{ready_at(events_at), ready_at(tap_at)};
}

}  // namespace unetback::datapath
