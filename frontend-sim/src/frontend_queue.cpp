#include "unetback/sim/netfront/frontend_queue.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include <spdlog/spdlog.h>

#include "unetback/rings/checksum.hpp"
#include "unetback/rings/packet_headers.hpp"
#include "unetback/util/rate_limit.hpp"

namespace unetback::sim {
namespace {

constexpr int tx_batch = 64;                        // frames read from the TAP per sweep
constexpr std::size_t frame_buf_size = 12 + 65536;  // vnet header + largest frame

}  // namespace

frontend_queue::frontend_queue(frontend_memory& memory, const queue_setup& setup)
    : memory_(memory), setup_(setup), ev_(memory.open_events()), frame_buf_(frame_buf_size) {
  const domid be = setup_.backend_id;
  tx_ring_page_ = memory_.share_page(be, grant_mode::read_write);
  rx_ring_page_ = memory_.share_page(be, grant_mode::read_write);
  tx_ = rings::tx_front_ring::init(memory_.memory(tx_ring_page_));
  rx_ = rings::rx_front_ring::init(memory_.memory(rx_ring_page_));
  tx_port_ = ev_->alloc_unbound(be);
  rx_port_ = setup_.split_event_channels ? ev_->alloc_unbound(be) : tx_port_;
  for (std::uint32_t id = 0; id < tx_ids; ++id) {
    tx_slots_.push_back(memory_.claim_slot(be, grant_mode::read_only));
    tx_free_ids_.push_back(static_cast<std::uint16_t>(tx_ids - 1 - id));
  }
  tx_in_flight_.assign(tx_ids, false);
  tx_control_.assign(tx_ids, false);
  for (std::uint32_t id = 0; id < rx_ids; ++id) {
    rx_slots_.push_back(memory_.claim_slot(be, grant_mode::read_write));
  }
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

frontend_queue::~frontend_queue() {
  stop();
  // Like xennet_disconnect_backend: end every grant; one the backend still
  // maps is counted and left allocated (Linux defers it).
  const auto release = [this](const shared_page& p) {
    if (memory_.release(p)) {
      counters_.grants_busy.fetch_add(1, std::memory_order_relaxed);
    }
  };
  release(tx_ring_page_);
  release(rx_ring_page_);
  for (const shared_page& p : tx_slots_) {
    release(p);
  }
  for (const shared_page& p : rx_slots_) {
    release(p);
  }
  ev_.reset();  // closes the ports
  ::close(stop_fd_);
  ::close(wake_fd_);
}

queue_keys frontend_queue::keys() const {
  return queue_keys{tx_ring_page_.ref, rx_ring_page_.ref, tx_port_, rx_port_,
                    setup_.split_event_channels};
}

void frontend_queue::fill_rx_ring() {
  while (rx_.free_requests() > 0) {
    const std::uint32_t idx = rx_.req_prod_pvt();
    const auto id = static_cast<std::uint16_t>(idx & (rx_ids - 1));
    memory_.grant_slot(rx_slots_[id]);
    rings::rx_request req{};
    req.id = id;
    req.gref = rx_slots_[id].ref.value();
    (void)rx_.write_request(req);
  }
  if (rx_.push_requests_and_check_notify()) {
    ev_->notify(rx_port_);
  }
}

void frontend_queue::start(platform::frame_port& tap) {
  if (worker_.joinable()) {
    return;
  }
  std::uint64_t drain = 0;
  // `(void)!`: a plain cast does not silence warn_unused_result (_FORTIFY_SOURCE).
  (void)!::read(stop_fd_, &drain, sizeof drain);
  worker_ = std::thread([this, &tap] { run(tap); });
}

void frontend_queue::stop() {
  if (!worker_.joinable()) {
    return;
  }
  const std::uint64_t one = 1;
  (void)!::write(stop_fd_, &one, sizeof one);
  worker_.join();
}

void frontend_queue::fault(const char* what) {
  UNETBACK_LOG_RATELIMITED(spdlog::level::err, "queue {}: backend protocol violation: {}",
                           setup_.index.value(), what);
  faulted_.store(true);
}

bool frontend_queue::tx_has_room() const {
  return tx_.free_requests() >= max_tx_ring_slots && tx_free_ids_.size() >= max_tx_data_slots;
}

void frontend_queue::run(platform::frame_port& tap) {
  while (!faulted_.load()) {
    process_tx_responses();
    process_rx_responses(tap);
    if (mcast_posted_.load(std::memory_order_acquire) && send_multicast_changes() &&
        tx_.push_requests_and_check_notify()) {
      ev_->notify(tx_port_);
    }
    if (tx_has_room()) {
      transmit_from_tap(tap);
    }
    const auto tx_pending = tx_.final_check_for_responses();
    const auto rx_pending = rx_.final_check_for_responses();
    if (!tx_pending || !rx_pending) {
      fault("more responses than requests");
      break;
    }
    if (tx_pending.value() != 0 || rx_pending.value() != 0) {
      continue;
    }
    pollfd stop{stop_fd_, POLLIN, 0};
    if (::poll(&stop, 1, 0) == 1) {
      break;
    }
    wait_for_work(tap, tx_has_room());
  }
}

void frontend_queue::wait_for_work(platform::frame_port& tap, bool tx_room) {
  std::array<pollfd, 4> fds{pollfd{stop_fd_, POLLIN, 0}, pollfd{ev_->fd(), POLLIN, 0},
                            pollfd{tx_room ? tap.fd() : -1, POLLIN, 0},
                            pollfd{wake_fd_, POLLIN, 0}};
  if (::poll(fds.data(), fds.size(), 200) <= 0) {
    return;
  }
  if ((fds[3].revents & POLLIN) != 0) {
    std::uint64_t drain = 0;
    (void)!::read(wake_fd_, &drain, sizeof drain);
  }
  if ((fds[1].revents & POLLIN) != 0) {
    counters_.events.fetch_add(1, std::memory_order_relaxed);
    std::array<evtchn_port, 4> got{};
    std::size_t n = 0;
    while (n < got.size()) {
      const auto p = ev_->pending();
      if (!p) {
        break;
      }
      got[n++] = *p;
    }
    // The rings are re-scanned on the next sweep; unmasking afterwards is
    // safe because every kick leaves work visible in the ring indices.
    for (std::size_t i = 0; i < n; ++i) {
      ev_->unmask(got[i]);
    }
  }
}

void frontend_queue::transmit_from_tap(platform::frame_port& tap) {
  const std::size_t hdr = tap.vnet_hdr_size();
  bool queued = false;
  for (int i = 0; i < tx_batch && tx_has_room(); ++i) {
    const long n = tap.read_frame(frame_buf_);
    if (n <= 0 || static_cast<std::size_t>(n) < hdr) {
      break;
    }
    rings::vnet_header vnet{};
    std::memcpy(&vnet, frame_buf_.data(), std::min(hdr, sizeof vnet));
    queued |= transmit(std::span(frame_buf_).subspan(hdr, static_cast<std::size_t>(n) - hdr), vnet);
  }
  if (queued && tx_.push_requests_and_check_notify()) {
    ev_->notify(tx_port_);
  }
}

bool frontend_queue::transmit(std::span<std::byte> frame, const rings::vnet_header& vnet) {
  rings::vnet_header hdr = vnet;
  // Without feature-ipv6-csum-offload the backend takes no partial IPv6
  // checksum: complete it here (Linux netfront lacks NETIF_F_IPV6_CSUM then).
  if ((hdr.flags & rings::vnet_f_needs_csum) != 0 && !setup_.backend.ipv6_csum_offload) {
    const auto l3 = rings::parse_l3(frame);
    if (l3 && l3.value().kind == rings::l3_kind::ipv6 && hdr.gso_type == rings::vnet_gso_none &&
        std::size_t{hdr.csum_start} + hdr.csum_offset + 2 <= l3.value().l4_end) {
      rings::complete_checksum(frame, hdr.csum_start, hdr.csum_offset, l3.value().l4_end,
                               l3.value().l4_protocol == rings::ipproto_udp);
      hdr.flags = rings::vnet_f_data_valid;
    }
  }
  const backend_tx_features be{setup_.backend.sg, setup_.backend.gso_tcpv4,
                               setup_.backend.gso_tcpv6};
  const auto plan = plan_tx(frame.size(), hdr, be, setup_.request.tx_slot_bytes);
  if (!plan) {
    counters_.tx_dropped.fetch_add(1, std::memory_order_relaxed);
    UNETBACK_LOG_RATELIMITED(spdlog::level::debug, "queue {}: tx drop: {}", setup_.index.value(),
                             to_string(plan.error()));
    return false;
  }
  std::array<grant_ref, max_tx_data_slots> grefs{};
  std::array<std::uint16_t, max_tx_data_slots> ids{};
  for (std::uint32_t i = 0; i < plan.value().data_slots; ++i) {
    const std::uint16_t id = tx_free_ids_.back();
    tx_free_ids_.pop_back();
    tx_in_flight_[id] = true;
    std::memcpy(memory_.memory(tx_slots_[id]).data(),
                frame.data() + std::size_t{i} * plan.value().slot_bytes, plan.value().data_len[i]);
    memory_.grant_slot(tx_slots_[id]);
    grefs[i] = tx_slots_[id].ref;
    ids[i] = id;
  }
  const tx_slots slots = build_tx_slots(plan.value(), grefs, ids);
  for (std::uint32_t i = 0; i < slots.count; ++i) {
    (void)tx_.write_request(slots.entries[i]);
  }
  count_tx_slots(plan.value().data_slots);
  counters_.tx_packets.fetch_add(1, std::memory_order_relaxed);
  counters_.tx_bytes.fetch_add(frame.size(), std::memory_order_relaxed);
  return true;
}

void frontend_queue::count_tx_slots(std::uint32_t slots) {
  // Only this worker writes the maximum: a plain load-compare-store is enough.
  if (slots > counters_.tx_max_slots.load(std::memory_order_relaxed)) {
    counters_.tx_max_slots.store(slots, std::memory_order_relaxed);
  }
}

void frontend_queue::post_multicast(const multicast_change& change) {
  {
    const std::lock_guard lock(mcast_mutex_);
    mcast_pending_.push_back(change);
  }
  mcast_posted_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

bool frontend_queue::send_multicast_changes() {
  std::vector<multicast_change> changes;
  {
    const std::lock_guard lock(mcast_mutex_);
    mcast_posted_.store(false, std::memory_order_relaxed);
    changes.swap(mcast_pending_);
  }
  std::size_t sent = 0;
  for (; sent < changes.size() && tx_.free_requests() >= 2 && !tx_free_ids_.empty(); ++sent) {
    const std::uint16_t id = tx_free_ids_.back();
    tx_free_ids_.pop_back();
    tx_in_flight_[id] = true;
    tx_control_[id] = true;
    rings::tx_request req{};
    req.id = id;
    req.flags = rings::tx_flags::extra_info;  // gref 0, size 0: no data
    (void)tx_.write_request(req);
    rings::extra_info extra{};
    extra.type = changes[sent].add ? rings::extra_type::mcast_add : rings::extra_type::mcast_del;
    std::memcpy(extra.u.mcast.addr, changes[sent].mac.data(), changes[sent].mac.size());
    rings::tx_request slot{};
    std::memcpy(&slot, &extra, sizeof extra);
    (void)tx_.write_request(slot);
    counters_.mcast_sent.fetch_add(1, std::memory_order_relaxed);
  }
  if (sent < changes.size()) {  // the ring was full: the rest go on a later sweep
    const std::lock_guard lock(mcast_mutex_);
    mcast_pending_.insert(mcast_pending_.begin(), changes.begin() + static_cast<long>(sent),
                          changes.end());
    mcast_posted_.store(true, std::memory_order_relaxed);
  }
  return sent != 0;
}

void frontend_queue::process_tx_responses() {
  bool bad_id = false;  // the rest of the batch is then only consumed
  const auto taken = tx_.take_responses([&](const rings::tx_response& rsp, std::uint32_t) {
    if (!bad_id && rsp.status != rings::netif_rsp::null) {  // null: an extra-info slot's
      bad_id = !complete_tx(rsp);
    }
  });
  if (!taken) {
    fault("TX responses beyond requests");
  } else if (bad_id) {
    fault("TX response for an id not in flight");
  }
}

bool frontend_queue::complete_tx(const rings::tx_response& rsp) {
  if (rsp.id >= tx_ids || !tx_in_flight_[rsp.id]) {
    return false;
  }
  tx_in_flight_[rsp.id] = false;
  if (tx_control_[rsp.id]) {
    tx_control_[rsp.id] = false;
    if (rsp.status != rings::netif_rsp::okay) {
      counters_.mcast_errors.fetch_add(1, std::memory_order_relaxed);
    }
    tx_free_ids_.push_back(rsp.id);
    return true;
  }
  if (rsp.status != rings::netif_rsp::okay) {
    counters_.tx_error_responses.fetch_add(1, std::memory_order_relaxed);
  }
  if (memory_.end_slot(tx_slots_[rsp.id])) {
    counters_.grants_busy.fetch_add(1, std::memory_order_relaxed);
    return true;  // still mapped by the backend: this slot id is retired
  }
  tx_free_ids_.push_back(rsp.id);
  return true;
}

void frontend_queue::process_rx_responses(platform::frame_port& tap) {
  const auto taken = rx_.take_responses([&](const rings::rx_response& rsp, std::uint32_t idx) {
    rx_consumed_.push_back(idx);
    const auto st = assembler_.feed(idx, rsp);
    if (st == rx_assembler::state::need_more) {
      return;
    }
    if (st == rx_assembler::state::complete) {
      deliver(tap);
    } else {
      counters_.rx_errors.fetch_add(1, std::memory_order_relaxed);
      UNETBACK_LOG_RATELIMITED(spdlog::level::debug, "queue {}: rx error: {}", setup_.index.value(),
                               to_string(assembler_.error()));
    }
    assembler_.reset();
    release_rx_slots();
  });
  if (!taken) {
    fault("RX responses beyond requests");
  } else if (taken.value() != 0) {
    fill_rx_ring();
  }
}

void frontend_queue::release_rx_slots() {
  for (const std::uint32_t idx : rx_consumed_) {
    const std::uint32_t id = idx & (rx_ids - 1);
    if (memory_.end_slot(rx_slots_[id])) {
      counters_.grants_busy.fetch_add(1, std::memory_order_relaxed);
    }
  }
  rx_consumed_.clear();
}

void frontend_queue::deliver(platform::frame_port& tap) {
  const rx_packet& pkt = assembler_.packet();
  const std::size_t hdr = tap.vnet_hdr_size();
  std::span<std::byte> frame(frame_buf_.data() + hdr, pkt.total);
  std::size_t at = 0;
  for (std::uint32_t i = 0; i < pkt.fragments; ++i) {
    const rx_fragment& f = pkt.frag[i];
    const auto page = memory_.memory(rx_slots_[f.ring_index & (rx_ids - 1)]);
    std::memcpy(frame.data() + at, page.data() + f.offset, f.len);
    at += f.len;
  }
  rings::tx_offload off;
  off.csum_blank = (pkt.flags & rings::rx_flags::csum_blank) != 0;
  if (off.csum_blank && setup_.request.no_csum_offload) {
    counters_.rx_partial_csum.fetch_add(1, std::memory_order_relaxed);
    return;  // a guest without checksum offload cannot complete it
  }
  off.data_validated = (pkt.flags & rings::rx_flags::data_validated) != 0;
  if (pkt.has_gso) {
    off.gso_type = pkt.gso.u.gso.type;
    off.gso_size = pkt.gso.u.gso.size;
  }
  const auto vnet = rings::guest_tx_to_vnet(frame, off);
  if (!vnet) {
    counters_.rx_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::memcpy(frame_buf_.data(), &vnet.value().hdr, std::min(hdr, sizeof(rings::vnet_header)));
  const iovec iov{frame_buf_.data(), hdr + pkt.total};
  if (tap.write_frame(std::span(&iov, 1)) <= 0) {
    counters_.rx_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  counters_.rx_packets.fetch_add(1, std::memory_order_relaxed);
  counters_.rx_bytes.fetch_add(pkt.total, std::memory_order_relaxed);
}

}  // namespace unetback::sim
