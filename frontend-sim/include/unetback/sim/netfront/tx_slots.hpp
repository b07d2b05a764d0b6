#pragma once
// Guest transmit, the pure part: how netfront-sim turns one frame read from
// its TAP (virtio_net_hdr + Ethernet frame) into netif TX ring slots
// (docs/protocol.md §3.3), like Linux xen-netfront's xennet_start_xmit:
//   slot 0   data, size = TOTAL length, flags csum_blank/data_validated,
//            more_data if more data slots follow, extra_info if a GSO extra follows
//   [extra]  XEN_NETIF_EXTRA_TYPE_GSO {size = MSS, type TCPV4/TCPV6}
//   slot k   data, size = this slot's bytes, more_data except on the last
// Each data slot carries up to `slot_bytes` (a page, as Linux; less for the
// GPLPV-like personality, whose Windows buffers give 64 KiB TSO frames 19
// slots), placed at offset 0 of its own page.

#include <array>
#include <cstddef>
#include <cstdint>

#include "unetback/rings/ids.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/rings/result.hpp"
#include "unetback/rings/vnet_hdr.hpp"

namespace unetback::sim {

/// Most data slots one frame may take: what Linux netback accepts (1 + 18,
/// docs/protocol.md §3.3). 65535 bytes in whole pages take 16.
inline constexpr std::uint32_t max_tx_data_slots = 19;
/// The smallest slot payload that keeps a 65535-byte frame within max_tx_data_slots.
inline constexpr std::uint32_t min_tx_slot_bytes =
    (rings::max_tx_size + max_tx_data_slots - 1) / max_tx_data_slots;
/// Most ring slots one frame may need (data slots plus one GSO extra).
inline constexpr std::uint32_t max_tx_ring_slots = max_tx_data_slots + 1;

/// What the backend accepts from us (its feature-* keys, docs/protocol.md §1.6).
struct backend_tx_features {
  bool sg = false;         ///< feature-sg: multi-slot packets
  bool gso_tcpv4 = false;  ///< feature-gso-tcpv4
  bool gso_tcpv6 = false;  ///< feature-gso-tcpv6
};

/// Why a frame cannot be transmitted (it is dropped and counted).
enum class tx_plan_error : std::uint8_t {
  too_short,        ///< shorter than an Ethernet header
  too_large,        ///< more than XEN_NETIF_MAX_TX_SIZE bytes
  needs_sg,         ///< larger than a page and the backend lacks feature-sg
  gso_unsupported,  ///< GSO type the backend did not advertise (or UDP)
  bad_gso,          ///< GSO with size 0
};

/// A short description of `e` for logs.
[[nodiscard]] const char* to_string(tx_plan_error e);

/// The slot layout of one frame: data slot i covers frame bytes
/// [i * slot_bytes, i * slot_bytes + data_len[i]).
struct tx_plan {
  std::uint16_t total = 0;        ///< slot 0's size field
  std::uint16_t slot_bytes = 0;   ///< payload of every data slot but the last
  std::uint16_t first_flags = 0;  ///< NETTXF_csum_blank / NETTXF_data_validated
  std::uint32_t data_slots = 0;
  std::array<std::uint16_t, max_tx_data_slots> data_len{};
  bool has_gso = false;
  rings::extra_info gso{};  ///< the GSO extra when has_gso
  /// Ring slots used: data slots plus the extra.
  [[nodiscard]] std::uint32_t ring_slots() const { return data_slots + (has_gso ? 1U : 0U); }
};

/// Plans the slots for a frame of `frame_len` bytes (vnet header excluded)
/// whose TAP vnet header is `vnet`, `slot_bytes` per data slot (clamped to
/// [min_tx_slot_bytes, page_size]).
[[nodiscard]] rings::result<tx_plan, tx_plan_error> plan_tx(
    std::size_t frame_len, const rings::vnet_header& vnet, const backend_tx_features& backend,
    std::uint32_t slot_bytes = rings::page_size);

/// The ring entries of a planned frame, in ring order (extras stored as their
/// 8 bytes in a zero-padded 12-byte slot).
struct tx_slots {
  std::array<rings::tx_request, max_tx_ring_slots> entries{};
  std::uint32_t count = 0;
};

/// Builds the entries of `plan`: data slot i uses grant `grefs[i]` and id `ids[i]`.
[[nodiscard]] tx_slots build_tx_slots(const tx_plan& plan,
                                      const std::array<grant_ref, max_tx_data_slots>& grefs,
                                      const std::array<std::uint16_t, max_tx_data_slots>& ids);

}  // namespace unetback::sim
