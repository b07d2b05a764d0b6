#include "unetback/datapath/control_ring.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <xen/grant_table.h>

#include <array>
#include <atomic>
#include <optional>
#include <thread>

#include "event_pump.hpp"
#include "fault_report.hpp"
#include "ring_dump.hpp"
#include "thread_util.hpp"
#include "unetback/rings/ctrl_ring.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/util/log_limits.hpp"

namespace unetback::datapath {

struct control_ring::impl {
  impl(platform::platform& p, domid fe, grant_ref ref, evtchn_port remote,
       std::shared_ptr<vif_shared_state> s, fault_handler f, std::string n)
      : frontend(fe),
        ring_ref(ref),
        remote_port(remote),
        shared(s ? std::move(s) : std::make_shared<vif_shared_state>(1)),
        on_fault(std::move(f)),
        name(std::move(n)),
        grants(p.open_grant_table()),
        channel(p.open_event_channel()),
        handler(shared->num_queues()) {}

  void release();
  void thread_main();
  [[nodiscard]] sweep_fault run();
  /// What one processing pass did.
  struct pass {
    std::uint32_t handled = 0;
    const char* fault = nullptr;  ///< producer overflow: stop
  };
  /// Answers every unconsumed request (at most one ring's worth).
  [[nodiscard]] pass process();
  [[nodiscard]] bool read_grant(grant_ref ref, std::span<std::byte> dest);
  /// Counts a rejected answer; logs it (rate-limited: the guest chooses).
  void account(const rings::ctrl_request& req, std::uint32_t status);

  domid frontend;
  grant_ref ring_ref;
  evtchn_port remote_port;
  std::shared_ptr<vif_shared_state> shared;
  fault_handler on_fault;
  std::string name;
  std::unique_ptr<platform::grant_table> grants;
  std::unique_ptr<platform::event_channel> channel;
  std::optional<mapped_ring<rings::ctrl_back_ring>> ring;
  std::optional<evtchn_port> port;
  rings::ctrl_handler handler;
  std::uint64_t published_generation = 0;
  queue_counters counters;  // events only; the pump needs somewhere to count
  std::atomic<std::uint64_t> handled{0};
  std::atomic<std::uint64_t> not_supported{0};
  std::atomic<std::uint64_t> invalid_parameter{0};
  std::atomic<std::uint64_t> buffer_overflow{0};
  std::atomic<std::uint32_t> req_cons{0};
  std::atomic<std::uint32_t> rsp_prod_pvt{0};
  int stop_fd = -1;
  std::atomic<bool> stopping{false};
  std::thread thread;
};

bool control_ring::impl::read_grant(grant_ref ref, std::span<std::byte> dest) {
  if (dest.size() > rings::page_size) {
    return false;
  }
  platform::grant_copy_segment seg{};
  seg.source.foreign.ref = ref.value();
  seg.source.foreign.offset = 0;
  seg.source.foreign.domid = frontend.value();
  seg.dest.virt = dest.data();
  seg.len = static_cast<std::uint16_t>(dest.size());
  seg.flags = GNTCOPY_source_gref;
  (void)grants->copy(std::span(&seg, 1));
  return seg.status == GNTST_okay;
}

void control_ring::impl::account(const rings::ctrl_request& req, std::uint32_t status) {
  switch (status) {
    case rings::ctrl_status::success:
      return;
    case rings::ctrl_status::not_supported:
      not_supported.fetch_add(1, std::memory_order_relaxed);
      return;
    case rings::ctrl_status::invalid_parameter:
      invalid_parameter.fetch_add(1, std::memory_order_relaxed);
      break;
    case rings::ctrl_status::buffer_overflow:
      buffer_overflow.fetch_add(1, std::memory_order_relaxed);
      break;
    default:
      break;  // ctrl_handler answers only the statuses above
  }
  UNETBACK_LOG_LIMITED(shared->log_limits(), spdlog::level::warn,
                       "{}: control ring request type {} rejected (status {})", name, req.type,
                       status);
}

control_ring::impl::pass control_ring::impl::process() {
  rings::ctrl_back_ring& r = ring->ring;
  const auto pending = r.unconsumed_requests();
  if (!pending) {
    return pass{0, rings::to_string(pending.error())};
  }
  const std::uint32_t n = pending.value();  // <= 128: bounded work per wake-up
  const auto reader = [this](grant_ref ref, std::span<std::byte> dest) {
    return read_grant(ref, dest);
  };
  for (std::uint32_t i = 0; i < n; ++i) {
    const rings::ctrl_request req = r.copy_request(r.req_cons());  // copied once
    r.consume(1);
    const rings::ctrl_response rsp = handler.handle(req, reader);
    account(req, rsp.status);
    r.write_response(rsp);
  }
  if (n == 0) {
    return pass{};
  }
  handled.fetch_add(n, std::memory_order_relaxed);
  if (handler.generation() != published_generation) {
    shared->publish_hash(handler.config());
    published_generation = handler.generation();
  }
  if (r.push_responses_and_check_notify()) {
    channel->notify(*port);
  }
  req_cons.store(r.req_cons(), std::memory_order_relaxed);
  rsp_prod_pvt.store(r.rsp_prod_pvt(), std::memory_order_relaxed);
  return pass{n, nullptr};
}

sweep_fault control_ring::impl::run() {
  event_pump pump(*channel, counters);
  while (!stopping.load(std::memory_order_acquire)) {
    const auto now = clock::now();
    pump.on_timer(now);
    (void)pump.drain();
    const pass p = process();
    if (p.fault != nullptr) {
      return sweep_fault{fault_source::control_ring, p.fault};
    }
    pump.settle(p.handled > 0, now);
    if (p.handled > 0) {
      continue;
    }
    const auto again = ring->ring.final_check_for_requests();
    if (!again || again.value() != 0) {
      continue;  // more requests, or an overflow the next process() reports
    }
    std::array<pollfd, 2> fds{pollfd{stop_fd, POLLIN, 0}, pollfd{channel->fd(), POLLIN, 0}};
    nfds_t count = 2;
    int timeout = -1;
    if (const auto at = pump.unmask_deadline()) {
      // Event-storm backoff (XSA-332): sleep until the unmask, not per doorbell.
      count = 1;
      timeout = static_cast<int>(std::max<std::int64_t>(
          0, std::chrono::ceil<std::chrono::milliseconds>(*at - now).count()));
    }
    (void)::poll(fds.data(), count, timeout);
  }
  return {};
}

void control_ring::impl::thread_main() {
  set_thread_name(name);
  if (const auto f = run_to_fault([this] { return run(); }, std::nullopt)) {
    report_fault(name, *f, on_fault);
  }
}

void control_ring::impl::release() {
  if (port) {
    channel->unbind(*port);
    port.reset();
  }
  ring.reset();
  if (stop_fd >= 0) {
    ::close(stop_fd);
    stop_fd = -1;
  }
}

control_ring::control_ring(platform::platform& platform, domid frontend, grant_ref ring_ref,
                           evtchn_port port, std::shared_ptr<vif_shared_state> shared,
                           fault_handler on_fault, std::string thread_name)
    : impl_(std::make_unique<impl>(platform, frontend, ring_ref, port, std::move(shared),
                                   std::move(on_fault), std::move(thread_name))) {}

control_ring::~control_ring() {
  stop();
}

bool control_ring::restore_hash(const rings::hash_config& config) {
  impl& c = *impl_;
  if (c.thread.joinable() || !c.handler.restore(config)) {
    return false;
  }
  c.shared->publish_hash(c.handler.config());
  c.published_generation = c.handler.generation();
  return true;
}

void control_ring::start() {
  impl& c = *impl_;
  if (c.thread.joinable()) {
    return;
  }
  try {
    c.ring.emplace(
        map_back_ring<rings::ctrl_back_ring>(*c.grants, c.frontend, c.ring_ref, "ctrl-ring-ref"));
    std::error_code ec;
    const evtchn_port local = c.channel->bind_interdomain(c.frontend, c.remote_port, ec);
    if (ec) {
      throw std::system_error(ec,
                              "bind event-channel-ctrl " + std::to_string(c.remote_port.value()));
    }
    c.port = local;
    c.stop_fd = make_wake_fd();
    c.stopping.store(false);
    c.req_cons = c.ring->ring.req_cons();
    c.rsp_prod_pvt = c.ring->ring.rsp_prod_pvt();
    c.thread = std::thread([&c] { c.thread_main(); });
  } catch (...) {
    c.release();
    throw;
  }
}

void control_ring::stop() {
  impl& c = *impl_;
  if (c.thread.joinable()) {
    c.stopping.store(true, std::memory_order_release);
    signal_wake_fd(c.stop_fd);
    c.thread.join();
  }
  c.release();
}

std::uint64_t control_ring::requests_handled() const {
  return impl_->handled.load(std::memory_order_relaxed);
}

ctrl_ring_counters control_ring::counters() const {
  const impl& c = *impl_;
  ctrl_ring_counters out;
  out.requests = c.handled.load(std::memory_order_relaxed);
  out.not_supported = c.not_supported.load(std::memory_order_relaxed);
  out.invalid_parameter = c.invalid_parameter.load(std::memory_order_relaxed);
  out.buffer_overflow = c.buffer_overflow.load(std::memory_order_relaxed);
  out.events = c.counters.events_received.load(std::memory_order_relaxed);
  out.event_storm_backoffs = c.counters.event_storm_backoffs.load(std::memory_order_relaxed);
  return out;
}

std::string control_ring::ring_dump() const {
  const impl& c = *impl_;
  if (!c.ring) {
    return "CTRL: not connected\n";
  }
  return format_ring("CTRL", rings::ctrl_back_ring::size, c.ring->ring.header_snapshot(),
                     c.req_cons.load(), c.rsp_prod_pvt.load());
}

}  // namespace unetback::datapath
