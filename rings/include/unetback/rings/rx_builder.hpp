#pragma once
// The guest-RX response builder (docs/protocol.md §3.4, §6.2 items 22-25).
// Given one packet (length, offload info, optional hash) and the frontend's
// features, it computes the ring slots the packet needs, and, given that many
// RX requests copied out of the ring, the grant-copy plan and every response:
//   slot 0      : first data chunk; flags = csum flags | extra_info | more_data
//   slots 1..e  : extra-info slots (GSO, then HASH), chained with FLAG_MORE
//   slots e+1.. : further data chunks, more_data on all but the last
// Response i goes to the ring index of request i (netfront matches by
// position); ids are echoed; data chunks are up to 4096 bytes at offset 0 of
// the request's page; every response byte is initialised (XSA-216).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "unetback/rings/ids.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/rings/result.hpp"
#include "unetback/rings/vnet_hdr.hpp"

namespace unetback::rings {

/// Most data slots one RX packet may use: netfront accepts up to
/// XEN_NETIF_NR_SLOTS_MIN slots per packet.
inline constexpr std::uint32_t rx_max_data_slots = nr_slots_min;
/// Most extra-info slots one RX packet may use (GSO + HASH).
inline constexpr std::uint32_t rx_max_extras = 2;
/// Most slots one RX packet may use.
inline constexpr std::uint32_t rx_max_slots = rx_max_data_slots + rx_max_extras;
/// Bytes per RX data slot (one page, offset 0: no XDP headroom).
inline constexpr std::uint32_t rx_slot_bytes = 4096;

/// Why an RX packet can never be delivered (it is dropped and counted).
enum class rx_error : std::uint8_t {
  empty,               ///< zero-length frame
  too_big_without_sg,  ///< > one page and the frontend has no feature-sg
  too_big,             ///< needs more than rx_max_data_slots pages
  gso_not_negotiated,  ///< GSO type the frontend did not ask for
};

/// A short, stable description of `e` for logs.
[[nodiscard]] constexpr const char* to_string(rx_error e) {
  switch (e) {
    case rx_error::empty:
      return "empty frame";
    case rx_error::too_big_without_sg:
      return "frame larger than a page without feature-sg";
    case rx_error::too_big:
      return "frame needs too many slots";
    case rx_error::gso_not_negotiated:
      return "GSO type not negotiated by the frontend";
  }
  return "unknown rx error";
}

/// A HASH extra to attach (control-ring hashing, docs/protocol.md §4.4).
struct rx_hash {
  bool present = false;
  std::uint8_t type = 0;    ///< _XEN_NETIF_CTRL_HASH_TYPE_* bit number
  std::uint32_t value = 0;  ///< Toeplitz hash
};

/// One packet to deliver.
struct rx_packet_desc {
  std::uint32_t length = 0;  ///< frame bytes (vnet header excluded)
  rx_offload offload;        ///< from vnet_to_guest_rx
  rx_hash hash;              ///< optional HASH extra
};

/// One grant copy: packet bytes [src_offset, src_offset + len) into the page
/// of `gref` at offset 0.
struct rx_copy {
  std::uint32_t slot = 0;        ///< index of the response this copy fills
  grant_ref gref;                ///< the frontend's writable grant (from its RX request)
  std::uint32_t src_offset = 0;  ///< offset in the private frame
  std::uint16_t len = 0;         ///< bytes, 1..4096
};

/// Everything to do for one packet: copies, then `slots` responses in order.
/// Entries past `copy_count` / `slots` are stale when the plan is reused.
struct rx_plan {
  std::uint32_t slots = 0;       ///< requests consumed == responses written
  std::uint32_t copy_count = 0;  ///< valid entries in `copies`
  std::array<rx_copy, rx_max_data_slots> copies{};
  std::array<rx_response, rx_max_slots> responses{};  ///< extras stored as 8-byte slots

  /// Grant copy `copy_index` failed: its slot's status becomes NETIF_RSP_ERROR
  /// (Linux overwrites the status with the copy error).
  void fail_copy(std::uint32_t copy_index) {
    responses[copies[copy_index].slot].status = netif_rsp::error;
  }
};

namespace detail {

[[nodiscard]] constexpr std::uint32_t rx_extra_count(const rx_packet_desc& p) {
  return (p.offload.gso_type != gso_type::none ? 1U : 0U) + (p.hash.present ? 1U : 0U);
}

/// An extra-info slot as the 8 bytes of an RX response slot (zeroed first).
[[nodiscard]] inline rx_response extra_slot(std::uint8_t type, bool more, const rx_packet_desc& p) {
  extra_info e;
  std::memset(&e, 0, sizeof(e));
  e.type = type;
  e.flags = more ? extra_flag_more : 0;
  if (type == extra_type::gso) {
    e.u.gso.size = p.offload.gso_size;
    e.u.gso.type = p.offload.gso_type;
  } else {
    e.u.hash.type = p.hash.type;
    e.u.hash.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
    for (std::size_t i = 0; i < 4; ++i) {
      e.u.hash.value[i] = static_cast<std::uint8_t>(p.hash.value >> (8 * i));  // little-endian
    }
  }
  rx_response r;
  std::memcpy(&r, &e, sizeof(r));
  return r;
}

/// A data response (zeroed first).
[[nodiscard]] inline rx_response data_slot(std::uint16_t id, std::uint16_t flags,
                                           std::uint16_t bytes) {
  rx_response r;
  std::memset(&r, 0, sizeof(r));
  r.id = id;
  r.offset = 0;
  r.flags = flags;
  r.status = static_cast<std::int16_t>(bytes);  // <= 4096
  return r;
}

/// NETRXF checksum flags of slot 0 (docs/protocol.md §3.4).
[[nodiscard]] constexpr std::uint16_t rx_csum_flags(const rx_offload& o) {
  if (o.csum_partial) {
    return rx_flags::csum_blank | rx_flags::data_validated;
  }
  return o.csum_validated ? rx_flags::data_validated : 0;
}

}  // namespace detail

/// Ring slots `p` needs: data slots of up to 4096 bytes plus its extras, or
/// why it can never be delivered to a frontend with features `f`.
[[nodiscard]] constexpr result<std::uint32_t, rx_error> rx_slots_needed(const rx_packet_desc& p,
                                                                        const offload_features& f) {
  if (p.length == 0) {
    return rx_error::empty;
  }
  const std::uint32_t data = (p.length + rx_slot_bytes - 1) / rx_slot_bytes;
  if (data > 1 && !f.sg) {
    return rx_error::too_big_without_sg;
  }
  if (data > rx_max_data_slots) {
    return rx_error::too_big;
  }
  if ((p.offload.gso_type == gso_type::tcpv4 && !(f.gso_tcpv4 && f.sg)) ||
      (p.offload.gso_type == gso_type::tcpv6 && !(f.gso_tcpv6 && f.sg))) {
    return rx_error::gso_not_negotiated;
  }
  return data + detail::rx_extra_count(p);
}

/// Builds the copies and responses for `p` into `plan` over the RX requests
/// `reqs`, which the caller copied out of the ring (reqs.size() >=
/// rx_slots_needed(p, f)); returns the slots used. `plan` is the caller's
/// storage, reused packet after packet: only its first `slots` responses and
/// `copy_count` copies are written, every one of them whole, so a 64-byte
/// frame costs one response and one copy, not a zeroed ~460-byte plan.
[[nodiscard]] inline result<std::uint32_t, rx_error> build_rx(const rx_packet_desc& p,
                                                              const offload_features& f,
                                                              std::span<const rx_request> reqs,
                                                              rx_plan& plan) {
  const auto needed = rx_slots_needed(p, f);
  if (!needed) {
    return needed.error();
  }
  plan.slots = needed.value();
  plan.copy_count = 0;
  const std::uint32_t extras = detail::rx_extra_count(p);
  const std::uint32_t data_slots = plan.slots - extras;
  std::uint32_t src = 0;
  for (std::uint32_t k = 0; k < data_slots; ++k) {
    const std::uint32_t slot = k == 0 ? 0 : extras + k;
    const auto len = static_cast<std::uint16_t>(std::min(rx_slot_bytes, p.length - src));
    std::uint16_t flags = k + 1 < data_slots ? rx_flags::more_data : 0;
    if (k == 0) {
      flags = static_cast<std::uint16_t>(flags | detail::rx_csum_flags(p.offload) |
                                         (extras > 0 ? rx_flags::extra_info : 0));
    }
    plan.responses[slot] = detail::data_slot(reqs[slot].id, flags, len);
    plan.copies[plan.copy_count++] = rx_copy{slot, grant_ref(reqs[slot].gref), src, len};
    src += len;
  }
  std::uint32_t slot = 1;
  if (p.offload.gso_type != gso_type::none) {
    plan.responses[slot] = detail::extra_slot(extra_type::gso, p.hash.present, p);
    ++slot;
  }
  if (p.hash.present) {
    plan.responses[slot] = detail::extra_slot(extra_type::hash, false, p);
  }
  return plan.slots;
}

}  // namespace unetback::rings
