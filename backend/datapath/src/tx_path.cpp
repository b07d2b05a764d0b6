#include "tx_path.hpp"

#include <spdlog/spdlog.h>
#include <sys/uio.h>
#include <xen/grant_table.h>

#include <algorithm>
#include <cstring>

#include "tap_errors.hpp"
#include "unetback/util/log_limits.hpp"

namespace unetback::datapath {
namespace {

/// Private buffer for the packets of one sweep: four maximum-size packets,
/// each placed up to a page further on (placement_for). A sweep stops early
/// (and continues in the next one) when a packet no longer fits, so one sweep
/// never needs more.
constexpr std::uint32_t tx_buffer_bytes = 4 * (65536 + page_bytes);

/// Where a packet's private copy starts, at or after `used`. A grant copy
/// splits its local range at our page boundaries, so a 4096-byte guest slot
/// copied across one of ours costs two copies. The packet is shifted (by less
/// than a page) so that its largest segment lands at the same offset within
/// one of our pages as in the guest's page: that segment, and the full-page
/// segments netfront puts after it, then cross none.
std::uint32_t placement_for(const rings::tx_packet& pkt, std::uint32_t used) {
  std::uint32_t anchor = 0;
  std::uint32_t anchor_rel = 0;
  std::uint32_t rel = 0;
  for (std::uint32_t i = 0; i < pkt.segment_count; ++i) {
    if (pkt.segments[i].size > pkt.segments[anchor].size) {
      anchor = i;
      anchor_rel = rel;
    }
    rel += pkt.segments[i].size;
  }
  if (pkt.segment_count == 0) {
    return used;
  }
  const rings::tx_segment& a = pkt.segments[anchor];
  const std::uint32_t at = (used + anchor_rel) % page_bytes;
  if (at + a.size <= page_bytes) {
    return used;  // already within one page
  }
  return used + (a.offset + page_bytes - at) % page_bytes;
}

rings::tx_parser_limits limits_of(const queue_tuning& t) {
  rings::tx_parser_limits l;
  l.max_slots_drop = t.max_tx_slots_drop;
  l.max_slots_fatal = t.max_tx_slots_fatal;
  return l;
}

std::uint32_t batch_of(const queue_tuning& t) {
  return std::clamp<std::uint32_t>(t.tx_batch, 1, rings::tx_back_ring::size);
}

}  // namespace

tx_path::tx_path(queue_context ctx, rings::tx_back_ring& ring)
    : ctx_(ctx),
      ring_(ring),
      limits_(limits_of(ctx.config.tuning)),
      last_req_prod_(ring.req_cons()),
      buf_(tx_buffer_bytes) {
  packets_.reserve(rings::tx_back_ring::size);
  seg_packet_.reserve(rings::tx_back_ring::size);
}

tx_sweep_result tx_path::plan(clock::time_point now, copy_batch& batch) {
  cur_ = tx_sweep_result{};
  packets_.clear();
  seg_packet_.clear();
  copies_ = &batch;
  first_seg_ = batch.size();
  const std::uint32_t req_prod = ring_.load_req_prod();
  cur_.new_requests = req_prod != last_req_prod_;
  last_req_prod_ = req_prod;
  const auto unconsumed = ring_.unconsumed_requests(req_prod);
  if (!unconsumed) {
    cur_.fault = sweep_fault{fault_source::tx_ring, rings::to_string(unconsumed.error())};
    return cur_;
  }
  const std::uint32_t n = unconsumed.value();
  if (n == 0) {
    return cur_;
  }
  // Copy once: every later decision uses window_ only (XSA-155).
  ring_.copy_requests(std::span(window_).first(n));
  buf_used_ = 0;
  const std::uint32_t planned = plan_packets(n, now);
  if (cur_.fault) {
    // Hostile frontend: nothing consumed, nothing answered, nothing to copy.
    packets_.clear();
    seg_packet_.clear();
    batch.truncate(first_seg_);
    return cur_;
  }
  ring_.consume(planned);
  bump(ctx_.counters.tx_requests, planned);
  cur_.consumed = planned;
  cur_.more = cur_.more || (planned < n && !cur_.throttled);
  return cur_;
}

tx_sweep_result tx_path::complete(const copy_batch& batch) {
  if (packets_.empty()) {
    return cur_;
  }
  check_copies(batch);
  for (pending_packet& pkt : packets_) {
    deliver(pkt);
  }
  // A response overwrites its request's slot: they go through the journal,
  // so a daemon killed mid-sweep leaves its successor either the requests or
  // the responses (restart without reconnect, response_journal.hpp).
  for (const pending_packet& pkt : packets_) {
    respond(pkt);
  }
  const bool asked = ctx_.tx_responses.commit(ring_);
  cur_.notify = asked || ctx_.config.tuning.notify_always;
  packets_.clear();
  return cur_;
}

std::uint32_t tx_path::plan_packets(std::uint32_t n, clock::time_point now) {
  const std::uint32_t batch = batch_of(ctx_.config.tuning);
  std::uint32_t pos = 0;
  while (pos < n && pos < batch) {
    const auto window = std::span<const rings::tx_request>(window_).subspan(pos, n - pos);
    const rings::tx_parse_result parsed = rings::parse_tx_packet(window, limits_);
    if (parsed.fatal()) {
      cur_.fault = sweep_fault{fault_source::tx_ring, rings::to_string(parsed.error)};
      return 0;
    }
    if (!plan_one(parsed, pos, now)) {
      break;
    }
    pos += parsed.packet.slots;
  }
  return pos;
}

bool tx_path::plan_one(const rings::tx_parse_result& p, std::uint32_t pos, clock::time_point now) {
  const rings::tx_packet& pkt = p.packet;
  pending_packet out;
  out.pos = pos;
  out.slots = pkt.slots;
  out.extras = pkt.extra_count;
  if (!p.ok()) {
    count_drop(p.error);
    out.status = rings::netif_rsp::error;
  } else if (pkt.mcast != rings::tx_mcast_op::none) {
    out.status = apply_mcast(pkt);
  } else {
    const std::uint32_t start = placement_for(pkt, buf_used_);
    if (std::size_t{start} + pkt.total_size > buf_.size()) {
      cur_.more = true;  // the next sweep starts with this packet
      return false;
    }
    if (!ctx_.shared.credit().consume(pkt.total_size, now)) {
      cur_.throttled = true;
      throttled_size_ = pkt.total_size;
      bump(ctx_.counters.tx_throttled);
      return false;
    }
    out.send = true;
    out.buf_off = start;
    out.len = pkt.total_size;
    out.offload =
        rings::tx_offload{pkt.csum_blank, pkt.data_validated,
                          pkt.has_gso ? pkt.gso_type : rings::gso_type::none, pkt.gso_size};
    buf_used_ = start + pkt.total_size;
    plan_copies(pkt, static_cast<std::uint32_t>(packets_.size()), start);
  }
  packets_.push_back(out);
  return true;
}

void tx_path::plan_copies(const rings::tx_packet& pkt, std::uint32_t packet_index,
                          std::uint32_t off) {
  for (std::uint32_t i = 0; i < pkt.segment_count; ++i) {
    const rings::tx_segment& s = pkt.segments[i];
    platform::grant_copy_segment seg = foreign_segment(ctx_.config.frontend, s.gref, s.offset);
    seg.dest.virt = buf_.data() + off;
    seg.len = s.size;
    seg.flags = GNTCOPY_source_gref;
    copies_->add(seg);
    seg_packet_.push_back(packet_index);
    off += s.size;
  }
}

std::int16_t tx_path::apply_mcast(const rings::tx_packet& pkt) {
  const mac_address mac = pkt.mcast_addr;
  if (pkt.mcast == rings::tx_mcast_op::del) {
    ctx_.shared.multicast_del(mac);
    bump(ctx_.counters.tx_mcast_del);
    return rings::netif_rsp::okay;
  }
  if (ctx_.shared.multicast_add(mac) == mcast_add_result::list_full) {
    bump(ctx_.counters.tx_mcast_list_full);
    return rings::netif_rsp::error;  // Linux: -ENOSPC => XEN_NETIF_RSP_ERROR
  }
  bump(ctx_.counters.tx_mcast_add);
  return rings::netif_rsp::okay;
}

void tx_path::count_drop(rings::tx_error e) {
  queue_counters& c = ctx_.counters;
  switch (e) {
    case rings::tx_error::runt:
      bump(c.tx_drops_runt);
      break;
    case rings::tx_error::slot_size_exceeds_remaining:
      bump(c.tx_drops_slot_size);
      break;
    case rings::tx_error::too_many_slots:
      bump(c.tx_drops_too_many_slots);
      break;
    case rings::tx_error::duplicate_extra:
      bump(c.tx_drops_duplicate_extra);
      break;
    case rings::tx_error::gso_not_negotiated:
      bump(c.tx_drops_gso_not_negotiated);
      break;
    default:
      break;  // fatal errors never reach here
  }
  bump(c.tx_errors);
  UNETBACK_LOG_LIMITED(ctx_.shared.log_limits(), spdlog::level::warn,
                       "{}: dropping guest TX packet: {}", ctx_.config.name, rings::to_string(e));
}

void tx_path::check_copies(const copy_batch& batch) {
  const auto segs = batch.range(first_seg_, seg_packet_.size());
  for (std::size_t i = 0; i < segs.size(); ++i) {
    if (segs[i].status == GNTST_okay) {
      continue;
    }
    bump(ctx_.counters.grant_copy_errors);
    pending_packet& pkt = packets_[seg_packet_[i]];
    if (pkt.send) {
      pkt.send = false;
      pkt.status = rings::netif_rsp::error;
      bump(ctx_.counters.tx_drops_grant_copy);
      bump(ctx_.counters.tx_errors);
      UNETBACK_LOG_LIMITED(ctx_.shared.log_limits(), spdlog::level::warn,
                           "{}: TX grant copy failed: status {}", ctx_.config.name, segs[i].status);
    }
  }
}

void tx_path::deliver(pending_packet& pkt) {
  if (!pkt.send) {
    return;
  }
  const auto frame = std::span(buf_).subspan(pkt.buf_off, pkt.len);
  const auto vnet = rings::guest_tx_to_vnet(frame, pkt.offload);
  if (!vnet) {
    pkt.status = rings::netif_rsp::error;
    bump(ctx_.counters.tx_drops_bad_headers);
    bump(ctx_.counters.tx_errors);
    UNETBACK_LOG_LIMITED(ctx_.shared.log_limits(), spdlog::level::warn,
                         "{}: dropping guest TX packet: {}", ctx_.config.name,
                         rings::to_string(vnet.error()));
    return;
  }
  if (vnet.value().checksum_repaired) {
    bump(ctx_.counters.tx_gso_checksum_fixups);
  }
  std::array<std::byte, sizeof(rings::vnet_header)> hdr{};
  std::memcpy(hdr.data(), &vnet.value().hdr, hdr.size());
  const std::array<iovec, 2> iov{iovec{hdr.data(), std::min(ctx_.tap.vnet_hdr_size(), hdr.size())},
                                 iovec{frame.data(), frame.size()}};
  const long written = ctx_.tap.write_frame(iov);
  if (written > 0) {
    bump(ctx_.counters.tx_packets);
    bump(ctx_.counters.tx_bytes, pkt.len);
  } else if (written == 0) {
    bump(ctx_.counters.tx_drops_tap_full);  // the host dropped it: the guest did nothing wrong
  } else {
    bump(ctx_.counters.tx_drops_tap_error);
    if (tap_gone(written)) {
      cur_.fault =
          sweep_fault{fault_source::tap,
                      tap_gone_fault};  // answered as usual; the worker stops after this sweep
    }
    UNETBACK_LOG_LIMITED(ctx_.shared.log_limits(), spdlog::level::info,
                         "{}: TAP write failed: errno {}", ctx_.config.name, -written);
  }
}

void tx_path::respond(const pending_packet& pkt) {
  // One response per consumed slot, in order (docs/protocol.md §3.3): the
  // first and every data slot echo their id with the packet's status; the
  // extra-info slots get NETIF_RSP_NULL.
  for (std::uint32_t i = 0; i < pkt.slots; ++i) {
    rings::tx_response rsp{};
    const bool extra = i >= 1 && i <= pkt.extras;
    rsp.id = extra ? 0 : window_[pkt.pos + i].id;
    rsp.status = extra ? rings::netif_rsp::null : pkt.status;
    ctx_.tx_responses.stage(rsp);
  }
}

bool tx_path::final_check() {
  const auto pending = ring_.final_check_for_requests();
  return !pending || pending.value() != 0;  // an overflow is work: the sweep reports it
}

}  // namespace unetback::datapath
