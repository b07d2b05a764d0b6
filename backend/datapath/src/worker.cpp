#include "worker.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <thread>

namespace unetback::datapath {

worker::worker(queue_context ctx, worker_rings rings, int stop_fd,
               const std::atomic<bool>& stopping, published_indices& published)
    : ctx_(ctx),
      rings_(rings),
      stop_fd_(stop_fd),
      stopping_(stopping),
      published_(published),
      tx_(ctx, rings.tx),
      rx_(ctx, rings.rx),
      pump_(rings.channel, ctx.counters),
      window_(std::chrono::microseconds(ctx.config.tuning.poll_us)) {}

const char* worker::run() {
  clock::time_point last_work = clock::now();
  while (!stopping_.load(std::memory_order_acquire)) {
    const clock::time_point now = clock::now();
    pump_.on_timer(now);
    (void)pump_.drain();
    const tx_sweep_result tx = tx_.sweep(now);
    if (tx.fault != nullptr) {
      return tx.fault;
    }
    const rx_sweep_result rx = rx_.sweep(now);
    if (rx.fault != nullptr) {
      return rx.fault;
    }
    notify(tx, rx);
    publish();
    const bool work = tx.consumed > 0 || rx.delivered > 0;
    pump_.settle(work || tx.new_requests || rx.new_requests, now);
    if (work || tx.more || rx.more) {
      if (work && slept_) {
        window_.on_wake_with_work(now - last_work);  // a wake-up a longer spin could have saved?
        slept_ = false;
      }
      last_work = now;
      continue;  // bounded sweeps: go round again before sleeping
    }
    if (busy_polling(now, last_work)) {
      // Spinning must not starve dom0's own threads on the same vCPU (the lab's
      // iperf3 receiver fell 2-4x at 2 queues with two spinning workers).
      std::this_thread::yield();
      continue;
    }
    // Final check (ring.h RING_FINAL_CHECK_FOR_REQUESTS): arm the event
    // thresholds, then look once more before sleeping.
    if (!tx.throttled && tx_.final_check()) {
      continue;
    }
    if (rx_.final_check()) {
      continue;
    }
    sleep(tx.throttled);
    slept_ = true;
  }
  return nullptr;
}

void worker::notify(const tx_sweep_result& tx, const rx_sweep_result& rx) {
  const bool shared_port = rings_.tx_port == rings_.rx_port;
  if (tx.notify) {
    rings_.channel.notify(rings_.tx_port);
    bump(ctx_.counters.notify_sent);
  }
  if (rx.notify && !(shared_port && tx.notify)) {
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

bool worker::busy_polling(clock::time_point now, clock::time_point last_work) const {
  const std::chrono::microseconds budget = window_.window();
  return budget.count() > 0 && now - last_work < budget;
}

int worker::poll_timeout_ms(clock::time_point now, bool tx_throttled) const {
  std::optional<clock::time_point> deadline = pump_.unmask_deadline();
  const auto earliest = [&deadline](clock::time_point t) {
    deadline = deadline ? std::min(*deadline, t) : t;
  };
  if (tx_throttled) {
    earliest(tx_.credit_ready_at());
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

void worker::sleep(bool tx_throttled) {
  std::array<pollfd, 3> fds{};
  fds[0] = pollfd{stop_fd_, POLLIN, 0};
  nfds_t count = 1;
  // During an event-storm backoff (XSA-332) the storming port stays masked
  // until the deadline, which bounds the timeout below: do not wake for the
  // event-channel fd meanwhile (a masked port raises nothing on Xen; in the
  // sim a guest could keep the fd readable and make every doorbell a loop).
  if (!pump_.unmask_deadline()) {
    fds[count++] = pollfd{rings_.channel.fd(), POLLIN, 0};
  }
  if (rx_.wants_tap()) {
    fds[count++] = pollfd{ctx_.tap.fd(), POLLIN, 0};
  }
  const int timeout = poll_timeout_ms(clock::now(), tx_throttled);
  const int rc = ::poll(fds.data(), count, timeout);
  if (rc < 0 && errno != EINTR) {
    throw std::system_error(errno, std::generic_category(), "poll");
  }
}

}  // namespace unetback::datapath
