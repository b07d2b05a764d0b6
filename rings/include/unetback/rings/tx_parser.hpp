#pragma once
// The guest-TX packet parser (docs/protocol.md §3.3, §6.2 items 11-17). It
// works ONLY on a private copy of the unconsumed request slots (the worker
// copies them out of the ring once, bounded by the ring size), never on the
// shared page, and turns the slots of one packet into a validated
// description, or a verdict:
//   drop  - malformed packet: NETIF_RSP_ERROR for every slot it consumed;
//   fatal - hostile frontend: disable the vif, touch the ring no more.
// It follows Linux xenvif_tx_build_gops / xenvif_get_extras /
// xenvif_count_requests, with these documented choices:
//  * A packet whose extra or data chain runs past the copied window is fatal
//    ("missing extra info" / "asked for more slots than available"), as in
//    Linux. The worker always copies every published request (up to req_prod,
//    at most the ring size), so the window end is the publication end, and a
//    frontend must publish whole packets (every netfront does).
//  * Slot thresholds count DATA slots including the first one: <=
//    max_slots_drop accepted, more dropped, >= max_slots_fatal fatal. The
//    defaults are Linux's, which counts the slots after the first: 19
//    accepted (XEN_NETIF_NR_SLOTS_MIN after the first), 20-21 dropped, 22 or
//    more fatal (fatal_skb_slots = 20 after the first).
//  * The minimum size (ETH_HLEN) applies to the packet's total size: the
//    worker coalesces the whole packet into one private buffer (XSA-423), so
//    the first slot needs no minimum of its own. (Linux checks the first slot.)
//  * A second extra of the same type drops the packet (Linux overwrites).
//  * A MCAST_ADD/MCAST_DEL extra makes a dummy packet: no frame, no size check.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "unetback/rings/ids.hpp"
#include "unetback/rings/netif.hpp"

namespace unetback::rings {

/// The most data slots any configuration may accept: every per-packet array
/// is sized for this worst case (XSA-432).
inline constexpr std::uint32_t tx_max_data_slots = 64;

/// Why a TX packet was refused; is_fatal() tells drop from fatal.
enum class tx_error : std::uint8_t {
  none,
  // drop: error responses for all slots, slots consumed
  runt,                         ///< total size < ETH_HLEN
  slot_size_exceeds_remaining,  ///< a following slot is larger than what remains of the total
  too_many_slots,               ///< more than max_slots_drop data slots
  duplicate_extra,              ///< two extras of the same type
  gso_not_negotiated,           ///< GSO extra for a type we did not advertise
  // fatal: hostile frontend
  slot_crosses_page,     ///< offset + size > 4096
  too_many_slots_fatal,  ///< max_slots_fatal data slots or more
  missing_slots,         ///< more_data chain runs past the published requests
  missing_extra,         ///< FLAG_MORE chain runs past the published requests
  bad_extra_type,        ///< extra type 0 or >= XEN_NETIF_EXTRA_TYPE_MAX
  bad_gso,               ///< GSO size 0 or type not TCPV4/TCPV6
};

/// True for the errors that disable the vif.
[[nodiscard]] constexpr bool is_fatal(tx_error e) {
  return e >= tx_error::slot_crosses_page;
}

/// A short, stable description of `e` for logs, counters and fault reasons.
[[nodiscard]] constexpr const char* to_string(tx_error e) {
  switch (e) {
    case tx_error::none:
      return "none";
    case tx_error::runt:
      return "packet smaller than an Ethernet header";
    case tx_error::slot_size_exceeds_remaining:
      return "slot size exceeds remaining packet size";
    case tx_error::too_many_slots:
      return "too many slots";
    case tx_error::duplicate_extra:
      return "duplicate extra info";
    case tx_error::gso_not_negotiated:
      return "GSO type not negotiated";
    case tx_error::slot_crosses_page:
      return "slot crosses a page boundary";
    case tx_error::too_many_slots_fatal:
      return "malicious number of slots";
    case tx_error::missing_slots:
      return "packet asked for more slots than published";
    case tx_error::missing_extra:
      return "missing extra info";
    case tx_error::bad_extra_type:
      return "invalid extra info type";
    case tx_error::bad_gso:
      return "invalid GSO size or type";
  }
  return "unknown tx error";
}

/// Parser thresholds (queue_tuning supplies them). Values are clamped so that
/// 1 <= max_slots_drop < max_slots_fatal <= tx_max_data_slots.
struct tx_parser_limits {
  std::uint32_t max_slots_drop = nr_slots_min + 1;  ///< more data slots than this: drop
  std::uint32_t max_slots_fatal = 22;               ///< this many data slots or more: fatal
  bool gso_tcpv4 = true;                            ///< we advertised feature-gso-tcpv4
  bool gso_tcpv6 = true;                            ///< we advertised feature-gso-tcpv6
};

/// One data slot that carries bytes (zero-length slots get no segment and no
/// grant operation: XSA-448).
struct tx_segment {
  grant_ref gref;            ///< the guest's grant of the data page
  std::uint16_t offset = 0;  ///< offset in that page (offset + size <= 4096)
  std::uint16_t size = 0;    ///< bytes (> 0)
  std::uint16_t id = 0;      ///< the request id of the slot
};

/// The multicast filter change a dummy packet asks for.
enum class tx_mcast_op : std::uint8_t { none, add, del };

/// A validated TX packet (or, for a drop, just its slot accounting).
struct tx_packet {
  std::uint32_t slots = 0;        ///< ring slots consumed: 1 + extras + following data slots
  std::uint32_t extra_count = 0;  ///< extra-info slots (they follow the first slot)
  std::uint32_t data_slots = 0;   ///< data slots, zero-length ones included
  std::uint16_t total_size = 0;   ///< the first slot's size field: the packet length
  bool csum_blank = false;        ///< NETTXF_csum_blank
  bool data_validated = false;    ///< NETTXF_data_validated
  bool has_gso = false;           ///< a GSO extra was present (validated: TCPV4/TCPV6, size > 0)
  std::uint8_t gso_type = gso_type::none;                ///< XEN_NETIF_GSO_TYPE_* of that extra
  std::uint16_t gso_size = 0;                            ///< its MSS
  bool has_hash = false;                                 ///< a HASH extra was present
  std::uint8_t hash_type = 0;                            ///< its type (bit number)
  std::uint8_t hash_algorithm = 0;                       ///< its algorithm
  std::uint32_t hash_value = 0;                          ///< its value (little-endian on the wire)
  tx_mcast_op mcast = tx_mcast_op::none;                 ///< dummy packet: filter change, no frame
  std::array<std::uint8_t, 6> mcast_addr{};              ///< MAC for mcast add/del
  std::uint32_t segment_count = 0;                       ///< valid entries in `segments`
  std::array<tx_segment, tx_max_data_slots> segments{};  ///< data, in packet order
};

/// Outcome of parsing one packet.
struct tx_parse_result {
  tx_error error = tx_error::none;  ///< none: packet valid
  tx_packet packet;                 ///< slots/extra_count valid unless fatal

  [[nodiscard]] bool ok() const { return error == tx_error::none; }
  [[nodiscard]] bool fatal() const { return is_fatal(error); }
  [[nodiscard]] bool dropped() const { return !ok() && !fatal(); }
};

namespace detail {

[[nodiscard]] constexpr tx_parser_limits clamp(tx_parser_limits l) {
  l.max_slots_fatal = std::min(std::max(l.max_slots_fatal, 2U), tx_max_data_slots);
  l.max_slots_drop = std::min(std::max(l.max_slots_drop, 1U), l.max_slots_fatal - 1);
  return l;
}

/// One packet's walk over the window: the state of xenvif_get_extras +
/// xenvif_count_requests. Fatal errors end the walk at once; the first drop
/// reason is remembered while the walk continues to the end of the packet
/// (its slots must all be consumed and answered).
class tx_walk {
 public:
  tx_walk(std::span<const tx_request> window, const tx_parser_limits& lim)
      : w_(window), lim_(lim) {}

  [[nodiscard]] tx_parse_result run() {
    const tx_request& first = w_[0];
    pkt_.total_size = first.size;
    pkt_.csum_blank = (first.flags & tx_flags::csum_blank) != 0;
    pkt_.data_validated = (first.flags & tx_flags::data_validated) != 0;
    // Segment 0 is the first slot's own bytes, sized once the chain is walked.
    pkt_.segments[0] = tx_segment{grant_ref(first.gref), first.offset, 0, first.id};
    pkt_.segment_count = 1;
    tx_error err = (first.flags & tx_flags::extra_info) != 0 ? walk_extras() : tx_error::none;
    if (err == tx_error::none) {
      err = walk_data_chain();
    }
    if (err == tx_error::none) {
      err = drop_ != tx_error::none ? drop_ : check_packet();
    }
    if (err == tx_error::none) {
      finish_segments();
    }
    if (pkt_.mcast != tx_mcast_op::none) {
      pkt_.segment_count = 0;  // a dummy packet carries no data: nothing to copy
    }
    return tx_parse_result{err, pkt_};
  }

 private:
  void note_drop(tx_error e) {
    if (drop_ == tx_error::none) {
      drop_ = e;
    }
  }

  /// Records one extra (type validity, duplicates, contents).
  [[nodiscard]] tx_error record_extra(const extra_info& e) {
    if (e.type == extra_type::none || e.type >= extra_type::max) {
      return tx_error::bad_extra_type;
    }
    if (seen_[e.type]) {
      note_drop(tx_error::duplicate_extra);
      return tx_error::none;
    }
    seen_[e.type] = true;
    if (e.type == extra_type::gso) {
      pkt_.has_gso = true;
      pkt_.gso_type = e.u.gso.type;
      pkt_.gso_size = e.u.gso.size;
    } else if (e.type == extra_type::hash) {
      pkt_.has_hash = true;
      pkt_.hash_type = e.u.hash.type;
      pkt_.hash_algorithm = e.u.hash.algorithm;
      pkt_.hash_value = static_cast<std::uint32_t>(e.u.hash.value[0]) |
                        static_cast<std::uint32_t>(e.u.hash.value[1]) << 8 |
                        static_cast<std::uint32_t>(e.u.hash.value[2]) << 16 |
                        static_cast<std::uint32_t>(e.u.hash.value[3]) << 24;
    } else if (pkt_.mcast == tx_mcast_op::none || e.type == extra_type::mcast_add) {
      // ADD wins over DEL in one packet, as in Linux (it handles ADD first).
      pkt_.mcast = e.type == extra_type::mcast_add ? tx_mcast_op::add : tx_mcast_op::del;
      std::memcpy(pkt_.mcast_addr.data(), e.u.mcast.addr, pkt_.mcast_addr.size());
    }
    return tx_error::none;
  }

  /// The extra-info chain after the first slot (xenvif_get_extras), bounded
  /// by the window: running past it is fatal ("missing extra info").
  [[nodiscard]] tx_error walk_extras() {
    extra_info e{};
    do {
      if (pos_ >= w_.size()) {
        return tx_error::missing_extra;
      }
      std::memcpy(&e, &w_[pos_++], sizeof(e));
      if (const tx_error err = record_extra(e); err != tx_error::none) {
        return err;
      }
    } while ((e.flags & extra_flag_more) != 0);
    pkt_.extra_count = static_cast<std::uint32_t>(pos_ - 1);
    return tx_error::none;
  }

  /// Checks one following data slot and records its segment.
  [[nodiscard]] tx_error take_data_slot(const tx_request& s) {
    ++pkt_.data_slots;
    if (s.offset + static_cast<std::uint32_t>(s.size) > page_size) {
      return tx_error::slot_crosses_page;  // fatal even in a dropped packet, as Linux
    }
    if (pkt_.data_slots > lim_.max_slots_drop) {
      note_drop(tx_error::too_many_slots);
    }
    if (s.size > remaining_) {
      note_drop(tx_error::slot_size_exceeds_remaining);  // >= 64 KiB frame, or corrupt
    }
    if (drop_ == tx_error::none) {
      remaining_ -= s.size;
      if (s.size > 0) {  // zero-length slots: no segment, no grant op (XSA-448)
        pkt_.segments[pkt_.segment_count++] = tx_segment{grant_ref(s.gref), s.offset, s.size, s.id};
      }
    }
    return tx_error::none;
  }

  /// The more_data chain (xenvif_count_requests): bounded by the window
  /// ("asked for more slots than available": fatal) and by max_slots_fatal.
  [[nodiscard]] tx_error walk_data_chain() {
    remaining_ = w_[0].size;
    pkt_.data_slots = 1;
    bool more = (w_[0].flags & tx_flags::more_data) != 0;
    while (more) {
      if (pos_ >= w_.size()) {
        return tx_error::missing_slots;
      }
      if (pkt_.data_slots + 1 >= lim_.max_slots_fatal) {
        return tx_error::too_many_slots_fatal;
      }
      const tx_request& s = w_[pos_++];
      if (const tx_error err = take_data_slot(s); err != tx_error::none) {
        return err;
      }
      more = (s.flags & tx_flags::more_data) != 0;
    }
    pkt_.slots = static_cast<std::uint32_t>(pos_);
    return tx_error::none;
  }

  /// Checks made once the packet's slots are accounted for and the chain did
  /// not drop it: mcast dummy, runt, first-slot page crossing, GSO.
  [[nodiscard]] tx_error check_packet() const {
    if (pkt_.mcast != tx_mcast_op::none) {
      return tx_error::none;  // dummy packet (Linux handles it before any size check)
    }
    if (pkt_.total_size < eth_hlen) {
      return tx_error::runt;
    }
    if (w_[0].offset + remaining_ > page_size) {
      return tx_error::slot_crosses_page;
    }
    if (pkt_.has_gso) {
      if (pkt_.gso_size == 0 ||
          (pkt_.gso_type != gso_type::tcpv4 && pkt_.gso_type != gso_type::tcpv6)) {
        return tx_error::bad_gso;  // Linux xenvif_set_skb_gso: fatal
      }
      if ((pkt_.gso_type == gso_type::tcpv4 && !lim_.gso_tcpv4) ||
          (pkt_.gso_type == gso_type::tcpv6 && !lim_.gso_tcpv6)) {
        return tx_error::gso_not_negotiated;
      }
    }
    return tx_error::none;
  }

  /// Sizes segment 0 with the first slot's own bytes, or removes it when empty.
  void finish_segments() {
    if (remaining_ > 0) {
      pkt_.segments[0].size = static_cast<std::uint16_t>(remaining_);
      return;
    }
    for (std::uint32_t i = 1; i < pkt_.segment_count; ++i) {
      pkt_.segments[i - 1] = pkt_.segments[i];
    }
    --pkt_.segment_count;
  }

  std::span<const tx_request> w_;
  tx_parser_limits lim_;
  tx_packet pkt_{};
  std::size_t pos_ = 1;
  std::uint32_t remaining_ = 0;  ///< total minus following slots: the first slot's own length
  tx_error drop_ = tx_error::none;
  std::array<bool, extra_type::max> seen_{};
};

}  // namespace detail

/// Parses the packet starting at window[0]. `window` is the private copy of
/// every published, unconsumed request (window.size() <= ring size); it must
/// not be empty. On ok/drop, result.packet.slots says how many slots to
/// consume and answer; on fatal the caller stops touching the ring.
[[nodiscard]] inline tx_parse_result parse_tx_packet(std::span<const tx_request> window,
                                                     tx_parser_limits limits = {}) {
  return detail::tx_walk(window, detail::clamp(limits)).run();
}

}  // namespace unetback::rings
