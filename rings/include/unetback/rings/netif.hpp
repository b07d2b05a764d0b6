#pragma once
// The netif wire types, straight from <xen/io/netif.h> (Xen 4.17), with
// static_asserts pinning every size and offset we rely on, the flag constants
// as typed C++ constants, and the three ring instantiations (TX, RX, ctrl).
// Careful: the TX and RX checksum flag bits differ (docs/protocol.md §3.2).

// netif.h is not self-contained: it needs the C fixed-width types in the
// global namespace, then xen.h (grant_ref_t, the ring macros' prerequisites).
#include <stdint.h>  // NOLINT(modernize-deprecated-headers): global uint32_t for Xen headers

#include <xen/xen.h>
// Keep the include order above: netif.h is not self-contained.
#include <xen/io/netif.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "unetback/rings/shared_ring.hpp"

namespace unetback::rings {

/// A guest TX request (12 bytes): gref, offset, flags, id, size.
using tx_request = netif_tx_request_t;
/// A TX response (4 bytes, in a 12-byte slot): id, status.
using tx_response = netif_tx_response_t;
/// A guest RX request (8 bytes): id, pad, gref.
using rx_request = netif_rx_request_t;
/// An RX response (8 bytes): id, offset, flags, status (bytes or NETIF_RSP_*).
using rx_response = netif_rx_response_t;
/// An extra-info slot (8 bytes) overlaying a TX request or an RX response.
using extra_info = netif_extra_info_t;
/// A control-ring request (16 bytes): id, type, data[3].
using ctrl_request = xen_netif_ctrl_request;
/// A control-ring response (12 bytes): id, type, status, data.
using ctrl_response = xen_netif_ctrl_response;

static_assert(sizeof(tx_request) == 12 && offsetof(tx_request, gref) == 0 &&
              offsetof(tx_request, offset) == 4 && offsetof(tx_request, flags) == 6 &&
              offsetof(tx_request, id) == 8 && offsetof(tx_request, size) == 10);
static_assert(sizeof(tx_response) == 4 && offsetof(tx_response, status) == 2);
static_assert(sizeof(rx_request) == 8 && offsetof(rx_request, id) == 0 &&
              offsetof(rx_request, gref) == 4);
static_assert(sizeof(rx_response) == 8 && offsetof(rx_response, offset) == 2 &&
              offsetof(rx_response, flags) == 4 && offsetof(rx_response, status) == 6);
static_assert(sizeof(extra_info) == 8 && offsetof(extra_info, flags) == 1 &&
              offsetof(extra_info, u) == 2);
static_assert(offsetof(extra_info, u.gso.size) == 2 && offsetof(extra_info, u.gso.type) == 4 &&
              offsetof(extra_info, u.gso.features) == 6);
static_assert(offsetof(extra_info, u.hash.type) == 2 &&
              offsetof(extra_info, u.hash.algorithm) == 3 &&
              offsetof(extra_info, u.hash.value) == 4);
static_assert(sizeof(ctrl_request) == 16 && offsetof(ctrl_request, data) == 4);
static_assert(sizeof(ctrl_response) == 12 && offsetof(ctrl_response, status) == 4 &&
              offsetof(ctrl_response, data) == 8);
static_assert(sizeof(extra_info) <= sizeof(tx_request) && sizeof(extra_info) == sizeof(rx_response),
              "extras overlay a TX request slot and an RX response slot");
static_assert(std::is_trivially_copyable_v<extra_info> && std::is_trivially_copyable_v<tx_request>);

/// NETTXF_*: flags of a guest TX request.
namespace tx_flags {
inline constexpr std::uint16_t csum_blank = NETTXF_csum_blank;          ///< bit 0
inline constexpr std::uint16_t data_validated = NETTXF_data_validated;  ///< bit 1
inline constexpr std::uint16_t more_data = NETTXF_more_data;            ///< bit 2
inline constexpr std::uint16_t extra_info = NETTXF_extra_info;          ///< bit 3
}  // namespace tx_flags

/// NETRXF_*: flags of an RX response (checksum bits swapped w.r.t. TX!).
namespace rx_flags {
inline constexpr std::uint16_t data_validated = NETRXF_data_validated;  ///< bit 0
inline constexpr std::uint16_t csum_blank = NETRXF_csum_blank;          ///< bit 1
inline constexpr std::uint16_t more_data = NETRXF_more_data;            ///< bit 2
inline constexpr std::uint16_t extra_info = NETRXF_extra_info;          ///< bit 3
inline constexpr std::uint16_t gso_prefix = NETRXF_gso_prefix;          ///< deprecated; never set
}  // namespace rx_flags
static_assert(tx_flags::csum_blank == 1 && rx_flags::csum_blank == 2 &&
              tx_flags::data_validated == 2 && rx_flags::data_validated == 1);

/// XEN_NETIF_EXTRA_TYPE_*: the `type` of an extra-info slot.
namespace extra_type {
inline constexpr std::uint8_t none = XEN_NETIF_EXTRA_TYPE_NONE;  ///< invalid
inline constexpr std::uint8_t gso = XEN_NETIF_EXTRA_TYPE_GSO;
inline constexpr std::uint8_t mcast_add = XEN_NETIF_EXTRA_TYPE_MCAST_ADD;  ///< TX only
inline constexpr std::uint8_t mcast_del = XEN_NETIF_EXTRA_TYPE_MCAST_DEL;  ///< TX only
inline constexpr std::uint8_t hash = XEN_NETIF_EXTRA_TYPE_HASH;
inline constexpr std::uint8_t max = XEN_NETIF_EXTRA_TYPE_MAX;  ///< types >= max are invalid
}  // namespace extra_type
static_assert(extra_type::max == 5, "Xen 4.17 netif.h: XDP (5) is not a valid extra type");

/// XEN_NETIF_EXTRA_FLAG_MORE: another extra-info slot follows.
inline constexpr std::uint8_t extra_flag_more = XEN_NETIF_EXTRA_FLAG_MORE;

/// XEN_NETIF_GSO_TYPE_*.
namespace gso_type {
inline constexpr std::uint8_t none = XEN_NETIF_GSO_TYPE_NONE;
inline constexpr std::uint8_t tcpv4 = XEN_NETIF_GSO_TYPE_TCPV4;
inline constexpr std::uint8_t tcpv6 = XEN_NETIF_GSO_TYPE_TCPV6;
}  // namespace gso_type

/// NETIF_RSP_*: TX response status and negative RX response status.
namespace netif_rsp {
inline constexpr std::int16_t dropped = NETIF_RSP_DROPPED;  ///< -2
inline constexpr std::int16_t error = NETIF_RSP_ERROR;      ///< -1
inline constexpr std::int16_t okay = NETIF_RSP_OKAY;        ///< 0
inline constexpr std::int16_t null = NETIF_RSP_NULL;        ///< 1: response to an extra-info slot
}  // namespace netif_rsp

/// XEN_NETIF_NR_SLOTS_MIN: every backend accepts packets of up to 18 slots.
inline constexpr std::uint32_t nr_slots_min = XEN_NETIF_NR_SLOTS_MIN;
/// XEN_NETIF_MAX_TX_SIZE: `size` is a u16.
inline constexpr std::uint32_t max_tx_size = XEN_NETIF_MAX_TX_SIZE;
/// ETH_HLEN: the smallest packet a backend forwards.
inline constexpr std::uint32_t eth_hlen = 14;

/// TX ring: 12-byte entries, 256 slots.
using tx_back_ring = back_ring<tx_request, tx_response>;
using tx_front_ring = front_ring<tx_request, tx_response>;
/// RX ring: 8-byte entries, 256 slots.
using rx_back_ring = back_ring<rx_request, rx_response>;
using rx_front_ring = front_ring<rx_request, rx_response>;
/// Control ring (feature-ctrl-ring): 16-byte entries, 128 slots.
using ctrl_back_ring = back_ring<ctrl_request, ctrl_response>;
using ctrl_front_ring = front_ring<ctrl_request, ctrl_response>;

static_assert(tx_back_ring::size == 256 && rx_back_ring::size == 256 &&
              ctrl_back_ring::size == 128);
static_assert(ring_entry_size<tx_request, tx_response> == sizeof(union netif_tx_sring_entry));
static_assert(ring_entry_size<rx_request, rx_response> == sizeof(union netif_rx_sring_entry));
static_assert(ring_entry_size<ctrl_request, ctrl_response> ==
              sizeof(union xen_netif_ctrl_sring_entry));
static_assert(offsetof(struct netif_tx_sring, ring) == sizeof(sring_header) &&
              offsetof(struct netif_tx_sring, req_event) == offsetof(sring_header, req_event) &&
              offsetof(struct netif_tx_sring, rsp_event) == offsetof(sring_header, rsp_event));
static_assert(tx_back_ring::size == __CONST_RING_SIZE(netif_tx, 4096) &&
              rx_back_ring::size == __CONST_RING_SIZE(netif_rx, 4096) &&
              ctrl_back_ring::size == __CONST_RING_SIZE(xen_netif_ctrl, 4096));

}  // namespace unetback::rings
