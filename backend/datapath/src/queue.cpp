#include "unetback/datapath/queue.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <thread>

#include "fault_report.hpp"
#include "kick_request.hpp"
#include "ring_dump.hpp"
#include "thread_util.hpp"
#include "unetback/datapath/vif_shared_state.hpp"
#include "worker.hpp"

namespace unetback::datapath {

struct queue::impl {
  impl(platform::platform& p, queue_config c, std::unique_ptr<platform::frame_port> t,
       std::shared_ptr<vif_shared_state> s, fault_handler f)
      : config(std::move(c)),
        tap(std::move(t)),
        shared(s ? std::move(s) : std::make_shared<vif_shared_state>(1)),
        on_fault(std::move(f)),
        state(config),
        counters(state.data().counters),
        tx_responses(state.data().tx),
        rx_responses(state.data().rx),
        grants(p.open_grant_table()),
        channel(p.open_event_channel()) {}

  void map_and_bind();
  void replay_journals();
  void kick_after_resume();
  void release();
  void thread_main();

  queue_config config;
  std::unique_ptr<platform::frame_port> tap;
  std::shared_ptr<vif_shared_state> shared;
  fault_handler on_fault;
  queue_state state;
  queue_counters& counters;  ///< in `state`: survives a restart
  tx_journal tx_responses;
  rx_journal rx_responses;
  std::unique_ptr<platform::grant_table> grants;
  std::unique_ptr<platform::event_channel> channel;
  std::optional<mapped_ring<rings::tx_back_ring>> tx;
  std::optional<mapped_ring<rings::rx_back_ring>> rx;
  std::optional<evtchn_port> tx_port;
  std::optional<evtchn_port> rx_port;
  published_indices published;
  std::unique_ptr<worker> work;
  int stop_fd = -1;
  kick_request kicks;  ///< operator kicks, answered by the worker
  std::atomic<bool> stopping{false};
  std::thread thread;
};

void queue::impl::map_and_bind() {
  tx.emplace(map_back_ring<rings::tx_back_ring>(*grants, config.frontend, config.tx_ring_ref,
                                                "tx-ring-ref"));
  rx.emplace(map_back_ring<rings::rx_back_ring>(*grants, config.frontend, config.rx_ring_ref,
                                                "rx-ring-ref"));
  std::error_code ec;
  tx_port = channel->bind_interdomain(config.frontend, config.tx_port, ec);
  if (ec) {
    tx_port.reset();
    throw std::system_error(ec, "bind event channel " + std::to_string(config.tx_port.value()));
  }
  if (!config.split_event_channels) {
    rx_port = tx_port;
    return;
  }
  rx_port = channel->bind_interdomain(config.frontend, config.rx_port, ec);
  if (ec) {
    rx_port.reset();
    throw std::system_error(ec, "bind event channel " + std::to_string(config.rx_port.value()));
  }
}

// Resume: a sweep the previous process journaled but did not publish is
// completed first (its requests were acted on; their slots may already hold
// some of its responses). A damaged record cannot be completed, and the ring
// may hold responses where requests were: this connection is not resumed
// (the vif closes; the frontend connects afresh).
void queue::impl::replay_journals() {
  const auto t = tx_responses.pending(tx->ring);
  const auto r = rx_responses.pending(rx->ring);
  if (tx_responses.damaged() || rx_responses.damaged()) {
    throw std::runtime_error(config.name + ": the previous daemon's unpublished " +
                             (tx_responses.damaged() ? "TX" : "RX") +
                             " sweep in the state file is damaged (checksum): not resuming");
  }
  if (t) {
    tx_responses.replay(tx->ring, *t);
    spdlog::info("{}: completed the previous daemon's unpublished TX sweep: {} responses at {}",
                 config.name, t->slots, t->base);
  }
  if (r) {
    rx_responses.replay(rx->ring, *r);
    spdlog::info("{}: completed the previous daemon's unpublished RX sweep: {} responses at {}",
                 config.name, r->slots, r->base);
  }
}

// Resume (queue_config::resume): the previous binder may have published
// responses without notifying, and the frontend's kicks while nobody was
// bound went nowhere. One notification per port makes the frontend look at
// rsp_prod again; the worker's first sweep looks at req_prod.
void queue::impl::kick_after_resume() {
  spdlog::info("{}: resuming at tx rsp_prod {} (req_prod {}), rx rsp_prod {} (req_prod {})",
               config.name, tx->ring.rsp_prod_pvt(), tx->ring.load_req_prod(),
               rx->ring.rsp_prod_pvt(), rx->ring.load_req_prod());
  channel->notify(*tx_port);
  bump(counters.notify_sent);
  if (rx_port != tx_port) {
    channel->notify(*rx_port);
    bump(counters.notify_sent);
  }
}

void queue::impl::release() {
  if (rx_port && rx_port != tx_port) {
    channel->unbind(*rx_port);
  }
  if (tx_port) {
    channel->unbind(*tx_port);
  }
  tx_port.reset();
  rx_port.reset();
  tx.reset();  // unmaps
  rx.reset();
  if (stop_fd >= 0) {
    ::close(stop_fd);
    stop_fd = -1;
  }
}

void queue::impl::thread_main() {
  set_thread_name(config.name);
  if (const auto f = run_to_fault([this] { return work->run(); }, config.index)) {
    bump(counters.faults);
    report_fault(config.name, *f, on_fault);
  }
}

queue::queue(platform::platform& platform, queue_config config,
             std::unique_ptr<platform::frame_port> tap, std::shared_ptr<vif_shared_state> shared,
             fault_handler on_fault)
    : impl_(std::make_unique<impl>(platform, std::move(config), std::move(tap), std::move(shared),
                                   std::move(on_fault))) {}

queue::~queue() {
  stop();
}

void queue::start() {
  impl& q = *impl_;
  if (q.thread.joinable()) {
    return;
  }
  try {
    q.map_and_bind();
    if (q.config.resume) {
      q.replay_journals();
      q.kick_after_resume();
    }
    q.stop_fd = make_wake_fd();
    q.stopping.store(false);
    if (q.config.features.multicast_control) {
      q.shared->set_multicast_filtering(true);
    }
    const queue_context ctx{q.config, q.counters,     *q.shared,     *q.grants,
                            *q.tap,   q.tx_responses, q.rx_responses};
    const worker_rings rings{q.tx->ring, q.rx->ring, *q.channel, *q.tx_port, *q.rx_port};
    q.work = std::make_unique<worker>(ctx, rings, q.stop_fd, q.stopping, q.published, &q.kicks);
    q.published.tx_req_cons = q.tx->ring.req_cons();
    q.published.tx_rsp_prod_pvt = q.tx->ring.rsp_prod_pvt();
    q.published.rx_req_cons = q.rx->ring.req_cons();
    q.published.rx_rsp_prod_pvt = q.rx->ring.rsp_prod_pvt();
    q.thread = std::thread([&q] { q.thread_main(); });
  } catch (...) {
    q.work.reset();
    q.release();
    throw;
  }
}

void queue::stop() {
  impl& q = *impl_;
  if (q.thread.joinable()) {
    q.stopping.store(true, std::memory_order_release);
    signal_wake_fd(q.stop_fd);
    q.thread.join();
  }
  q.work.reset();
  q.release();
}

void queue::discard_state(const queue_config& config) {
  queue_state::discard(config.state_file);
}

bool queue::kick() {
  if (!impl_->thread.joinable()) {
    return false;
  }
  impl_->kicks.post();
  return true;
}

queue_counters_snapshot queue::counters() const {
  return snapshot(impl_->counters);
}

std::string queue::ring_dump() const {
  const impl& q = *impl_;
  std::string out =
      "Queue " + std::to_string(q.config.index.value()) + " (" + q.config.name + ")\n";
  if (!q.tx || !q.rx) {
    return out + "not connected\n";
  }
  out += format_ring("TX", rings::tx_back_ring::size, q.tx->ring.header_snapshot(),
                     q.published.tx_req_cons.load(), q.published.tx_rsp_prod_pvt.load());
  out += format_ring("RX", rings::rx_back_ring::size, q.rx->ring.header_snapshot(),
                     q.published.rx_req_cons.load(), q.published.rx_rsp_prod_pvt.load());
  return out;
}

const queue_config& queue::config() const {
  return impl_->config;
}

}  // namespace unetback::datapath
