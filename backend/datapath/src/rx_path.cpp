#include "rx_path.hpp"

#include <spdlog/spdlog.h>
#include <xen/grant_table.h>

#include <algorithm>
#include <cstring>

#include "tap_errors.hpp"
#include "unetback/rings/toeplitz.hpp"
#include "unetback/util/log_limits.hpp"

namespace unetback::datapath {
namespace {

constexpr std::uint32_t max_vnet_hdr = sizeof(rings::vnet_header);
// Frames dropped from the TAP per drain: more than its default txqueuelen (500).
constexpr std::uint32_t max_drained_frames = 1024;

bool is_filterable_multicast(std::span<const std::byte> frame) {
  if (frame.size() < 6 || (static_cast<std::uint8_t>(frame[0]) & 1U) == 0) {
    return false;
  }
  // Broadcast is not PACKET_MULTICAST: never filtered (Linux xenvif_start_xmit).
  return !std::all_of(frame.begin(), frame.begin() + 6,
                      [](std::byte b) { return b == std::byte{0xFF}; });
}

}  // namespace

rx_path::rx_path(queue_context ctx, rings::rx_back_ring& ring)
    : ctx_(ctx),
      ring_(ring),
      features_(offload_features_of(ctx.config.features)),
      batch_(std::clamp<std::uint32_t>(ctx.config.tuning.rx_batch, 1, rings::rx_back_ring::size)),
      hdr_size_(
          static_cast<std::uint32_t>(std::min<std::size_t>(ctx.tap.vnet_hdr_size(), max_vnet_hdr))),
      max_read_(hdr_size_ + rings::rx_max_data_slots * rings::rx_slot_bytes + 1),
      last_req_prod_(ring.req_cons()),
      placed_(batch_ + 1),
      buf_(std::max<std::size_t>(ctx.config.tuning.rx_backlog_bytes,
                                 page_bytes + 2 * std::size_t{max_read_})) {
  seg_plan_.reserve(rings::rx_back_ring::size);
  seg_copy_.reserve(rings::rx_back_ring::size);
}

rx_sweep_result rx_path::plan(clock::time_point now, bool tap_readable, copy_batch& batch) {
  cur_ = rx_sweep_result{};
  now_ = now;
  copies_ = &batch;
  first_seg_ = batch.size();
  const bool had_slots = slots_posted_;
  refresh_hash();
  const std::uint32_t req_prod = ring_.load_req_prod();
  cur_.new_requests = req_prod != last_req_prod_;
  last_req_prod_ = req_prod;
  placed_count_ = 0;
  seg_plan_.clear();
  seg_copy_.clear();
  reads_ = 0;
  // Without posted buffers the TAP was not polled: what it holds is unknown.
  waiting_ = fill(tap_readable || !had_slots);
  if (cur_.fault) {
    placed_count_ = 0;
    seg_plan_.clear();
    seg_copy_.clear();
    batch.truncate(first_seg_);
    return cur_;
  }
  cur_.slots_arrived = !had_slots && slots_posted_;
  return cur_;
}

rx_sweep_result rx_path::complete(const copy_batch& batch) {
  flush(batch);
  // A stall is time without deliveries (Linux: last_rx_time): a sweep that
  // delivered ends it, and if it used up the buffers the clock starts again
  // now, so a guest that never posts more is found stalled without an event.
  if (cur_.delivered > 0 || !waiting_) {
    waiting_since_.reset();
    end_stall();
  }
  if (waiting_) {
    track_stall(now_);
  }
  compact();
  return cur_;
}

bool rx_path::fill(bool tap_readable) {
  while (reads_ < batch_ || held_) {
    const auto avail = ring_.unconsumed_requests();
    if (!avail) {
      cur_.fault = sweep_fault{fault_source::rx_ring, rings::to_string(avail.error())};
      return false;
    }
    slots_posted_ = avail.value() > 0;
    if (!held_) {
      if (avail.value() == 0) {
        return true;  // no buffers posted: leave frames in the TAP (backpressure)
      }
      if (!tap_readable) {
        return false;
      }
      if (reads_ >= batch_ || next_read_start() + std::size_t{max_read_} > buf_.size()) {
        cur_.more = true;
        return false;
      }
      if (!read_one()) {
        return false;
      }
      continue;  // held now, or the frame was dropped
    }
    if (avail.value() < held_->need) {
      return true;  // wait for enough slots for the head frame
    }
    place_held();
  }
  cur_.more = true;
  return false;
}

void rx_path::refresh_hash() {
  if (ctx_.shared.hash_generation() == hash_generation_) {
    return;
  }
  const hash_snapshot snap = ctx_.shared.read_hash();
  if (snap.generation != 0) {
    hash_ = snap.config;
    hash_generation_ = snap.generation;
  }
}

std::uint32_t rx_path::next_read_start() const {
  const std::uint32_t data = (buf_used_ + hdr_size_ + page_bytes - 1) / page_bytes * page_bytes;
  return data - hdr_size_;
}

bool rx_path::read_one() {
  const std::uint32_t start = next_read_start();
  const long n = ctx_.tap.read_frame(std::span(buf_).subspan(start, max_read_));
  if (n == 0) {
    return false;
  }
  ++reads_;
  if (n < 0) {
    bump(ctx_.counters.rx_tap_read_errors);
    if (tap_gone(n)) {
      cur_.fault = sweep_fault{fault_source::tap, tap_gone_fault};
      return false;
    }
    UNETBACK_LOG_LIMITED(ctx_.shared.log_limits(), spdlog::level::warn,
                         "{}: TAP read failed: errno {}", ctx_.config.name, -n);
    return false;
  }
  accept_frame(start, static_cast<std::uint32_t>(n));
  return true;
}

void rx_path::accept_frame(std::uint32_t start, std::uint32_t len) {
  queue_counters& c = ctx_.counters;
  const std::uint32_t hdr_size = hdr_size_;
  if (len < hdr_size) {
    bump(c.rx_drops_bad_vnet_hdr);
    return;
  }
  if (len >= max_read_) {
    bump(c.rx_drops_too_big);  // possibly truncated: larger than any deliverable frame
    return;
  }
  rings::vnet_header h{};
  std::memcpy(static_cast<void*>(&h), buf_.data() + start, hdr_size);
  const auto frame = std::span(buf_).subspan(start + hdr_size, len - hdr_size);
  const auto offload = rings::vnet_to_guest_rx(h, frame, features_);
  if (!offload) {
    bump(c.rx_drops_bad_vnet_hdr);
    return;
  }
  if (ctx_.shared.multicast_filtering() && is_filterable_multicast(frame)) {
    mac_address dst{};
    std::memcpy(dst.data(), frame.data(), dst.size());
    if (!ctx_.shared.multicast_match(dst)) {
      bump(c.rx_drops_multicast_filtered);
      return;
    }
  }
  held_frame held;
  held.start = start;
  held.data_off = start + hdr_size;
  held.read_len = len;
  held.desc.length = static_cast<std::uint32_t>(frame.size());
  held.desc.offload = offload.value();
  held.desc.hash = hash_for(frame);
  const auto need = rings::rx_slots_needed(held.desc, features_);
  if (!need) {
    count_unfit(need.error());
    return;
  }
  if (offload.value().checksum_completed) {
    bump(c.rx_checksum_completed);
  }
  held.need = need.value();
  held_ = held;
  buf_used_ = start + len;
}

rings::rx_hash rx_path::hash_for(std::span<const std::byte> frame) const {
  if (!hash_.hashing()) {
    return {};
  }
  const auto in = rings::build_hash_input(frame, hash_.flags);
  if (!in) {
    return {};  // no enabled type applies: no hash (Linux clears it)
  }
  return rings::rx_hash{true, in->type, rings::toeplitz_hash(hash_.key, in->data())};
}

void rx_path::count_unfit(rings::rx_error e) {
  queue_counters& c = ctx_.counters;
  if (e == rings::rx_error::empty) {
    bump(c.rx_drops_empty);
  } else if (e == rings::rx_error::gso_not_negotiated) {
    bump(c.rx_drops_gso_not_negotiated);
  } else {
    bump(c.rx_drops_too_big);
  }
}

void rx_path::place_held() {
  const held_frame h = *held_;
  held_.reset();
  const auto reqs = std::span(reqs_).first(h.need);
  ring_.copy_requests(reqs);  // copied once; consumed only with a plan for them
  // A sweep places the frame held from the last one and at most batch_ it
  // reads (fill), so placed_ has room; the plan is built where flush() reads it.
  const std::uint32_t index = placed_count_;
  placed_frame& frame = placed_[index];
  if (const auto built = rings::build_rx(h.desc, features_, reqs, frame.plan); !built) {
    count_unfit(built.error());  // unreachable: rx_slots_needed accepted the same desc
    return;
  }
  frame.length = h.desc.length;
  ++placed_count_;
  ring_.consume(h.need);
  bump(ctx_.counters.rx_slots, h.need);
  if (h.desc.hash.present) {
    bump(ctx_.counters.rx_hash_extras);
  }
  const rings::rx_plan& p = frame.plan;
  for (std::uint32_t i = 0; i < p.copy_count; ++i) {
    const rings::rx_copy& cp = p.copies[i];
    platform::grant_copy_segment seg{};
    seg.source.virt = buf_.data() + h.data_off + cp.src_offset;
    seg.dest.foreign.ref = cp.gref.value();
    seg.dest.foreign.offset = 0;
    seg.dest.foreign.domid = ctx_.config.frontend.value();
    seg.len = cp.len;
    seg.flags = GNTCOPY_dest_gref;
    copies_->add(seg);
    seg_plan_.push_back(index);
    seg_copy_.push_back(i);
  }
}

void rx_path::flush(const copy_batch& batch) {
  queue_counters& c = ctx_.counters;
  const auto segs = batch.range(first_seg_, seg_plan_.size());
  for (std::size_t i = 0; i < segs.size(); ++i) {
    if (segs[i].status != GNTST_okay) {
      placed_[seg_plan_[i]].plan.fail_copy(seg_copy_[i]);
      bump(c.grant_copy_errors);
      bump(c.rx_copy_errors);
    }
  }
  for (const placed_frame& f : std::span(placed_).first(placed_count_)) {
    for (std::uint32_t s = 0; s < f.plan.slots; ++s) {
      ctx_.rx_responses.stage(f.plan.responses[s]);  // for the request's own slot
    }
    bump(c.rx_packets);
    bump(c.rx_bytes, f.length);
  }
  cur_.delivered = placed_count_;
  if (placed_count_ > 0) {
    const bool asked = ctx_.rx_responses.commit(ring_);
    cur_.notify = asked || ctx_.config.tuning.notify_always;
  }
}

void rx_path::track_stall(clock::time_point now) {
  const queue_tuning& t = ctx_.config.tuning;
  if (!waiting_since_) {
    waiting_since_ = now;
    drain_at_ = now + t.rx_drain_timeout;
    return;
  }
  if (!stall_counted_ && now - *waiting_since_ >= t.rx_stall_timeout) {
    // No usable buffers for rx_stall_timeout (XSA-392): carrier off, so the
    // host stops queueing frames for a guest that takes none.
    bump(ctx_.counters.rx_stalls);
    stall_counted_ = true;
    set_carrier_result(ctx_.shared.rx_stalled(ctx_.tap), false);
    UNETBACK_LOG_LIMITED(ctx_.shared.log_limits(), spdlog::level::warn,
                         "{}: guest RX stalled (no usable buffers): carrier off", ctx_.config.name);
    drain_at_ = now;
  }
  if (now >= drain_at_) {
    drop_waiting_frames();
    drain_at_ = now + t.rx_drain_timeout;
  }
}

void rx_path::drop_waiting_frames() {
  if (held_) {
    bump(ctx_.counters.rx_drops_no_slots);  // it may never fit
    held_.reset();
  }
  // Bounded: the TAP's queue holds at most its txqueuelen frames, and the
  // carrier (once off) or the next drain takes care of the rest.
  const auto scratch = std::span(buf_).first(max_read_);
  for (std::uint32_t i = 0; i < max_drained_frames; ++i) {
    const long n = ctx_.tap.read_frame(scratch);
    if (n <= 0) {
      break;
    }
    bump(ctx_.counters.rx_drops_stale);
  }
}

void rx_path::end_stall() {
  if (stall_counted_) {
    stall_counted_ = false;
    set_carrier_result(ctx_.shared.rx_ready(ctx_.tap), true);
    UNETBACK_LOG_LIMITED(ctx_.shared.log_limits(), spdlog::level::info, "{}: guest RX ready again",
                         ctx_.config.name);
  }
}

void rx_path::set_carrier_result(long rc, bool on) const {
  if (rc < 0) {
    UNETBACK_LOG_LIMITED(ctx_.shared.log_limits(), spdlog::level::warn, "{}: carrier {}: errno {}",
                         ctx_.config.name, on ? "on" : "off", -rc);
  }
}

void rx_path::compact() {
  if (!held_) {
    buf_used_ = 0;
    return;
  }
  // To the first page, keeping its place within a page (next_read_start()).
  const std::uint32_t start = held_->start % page_bytes;
  if (held_->start != start) {
    std::memmove(buf_.data() + start, buf_.data() + held_->start, held_->read_len);
    held_->data_off -= held_->start - start;
    held_->start = start;
  }
  buf_used_ = start + held_->read_len;
}

std::optional<clock::time_point> rx_path::stall_deadline() const {
  if (!waiting_since_) {
    return std::nullopt;
  }
  if (stall_counted_) {
    return drain_at_;
  }
  return std::min(drain_at_, *waiting_since_ + ctx_.config.tuning.rx_stall_timeout);
}

bool rx_path::final_check() {
  const std::uint32_t req_prod = ring_.load_req_prod();
  const auto avail = ring_.unconsumed_requests(req_prod);
  if (!avail) {
    return true;  // the next sweep reports the overflow
  }
  if (held_) {
    if (avail.value() >= held_->need) {
      return true;
    }
    ring_.set_req_event(req_prod + 1);  // Linux: wake me on the next posted buffer
    const auto again = ring_.unconsumed_requests();
    return !again || again.value() >= held_->need;
  }
  if (avail.value() > 0) {
    slots_posted_ = true;  // the TAP fd decides when there is work
    return false;
  }
  const auto pending = ring_.final_check_for_requests();  // req_event = req_cons + 1
  if (!pending) {
    return true;
  }
  slots_posted_ = pending.value() > 0;
  return false;
}

}  // namespace unetback::datapath
