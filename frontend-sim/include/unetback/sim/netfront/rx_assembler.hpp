#pragma once
// Guest receive, the pure part: reassembles one packet from consecutive RX
// response slots (docs/protocol.md §3.4), like Linux xennet_get_responses:
//   slot 0   status = bytes in this slot, flags csum/more_data/extra_info
//   [extras] extra-info slots (GSO, HASH...) chained by XEN_NETIF_EXTRA_FLAG_MORE
//   slot k   status = bytes, more_data except on the last
// The packet length is the sum of data-slot statuses. A negative status, a
// slot overrunning its page, an unknown extra or too many slots makes the
// packet an error (all its slots are still consumed).

#include <array>
#include <cstdint>

#include "unetback/rings/netif.hpp"

namespace unetback::sim {

/// Most data slots accepted for one packet (Linux: MAX_SKB_FRAGS + 1).
inline constexpr std::uint32_t max_rx_data_slots = 18;
/// Most extra-info slots accepted for one packet.
inline constexpr std::uint32_t max_rx_extras = 4;

/// Why a received packet is dropped.
enum class rx_error : std::uint8_t {
  slot_status,     ///< a data slot carried NETIF_RSP_* < 0
  slot_overrun,    ///< offset + status > 4096
  too_many_slots,  ///< more than max_rx_data_slots data slots
  bad_extra,       ///< extra type none / unknown, or too many extras
  too_large,       ///< more than 65535 bytes in total
};

/// A short description of `e` for logs.
[[nodiscard]] const char* to_string(rx_error e);

/// One data slot of a packet: ring index (its buffer is the one posted at
/// that index), and where the bytes lie in that buffer.
struct rx_fragment {
  std::uint32_t ring_index = 0;
  std::uint16_t offset = 0;
  std::uint16_t len = 0;
};

/// A reassembled packet.
struct rx_packet {
  std::uint16_t flags = 0;  ///< slot 0's NETRXF_* flags
  std::uint32_t total = 0;
  std::uint32_t fragments = 0;
  std::array<rx_fragment, max_rx_data_slots> frag{};
  bool has_gso = false;
  rings::extra_info gso{};
  std::uint32_t slots = 0;  ///< ring slots consumed, extras included
};

/// Feeds slots one by one. Not thread-safe; one per RX ring.
class rx_assembler {
 public:
  enum class state : std::uint8_t { need_more, complete, failed };

  /// Takes the slot at ring index `idx` (its raw 8 bytes, copied out once).
  state feed(std::uint32_t idx, const rings::rx_response& slot);
  /// The packet once feed() returned complete (or the partial one on failure).
  [[nodiscard]] const rx_packet& packet() const { return pkt_; }
  /// Why feed() returned failed.
  [[nodiscard]] rx_error error() const { return error_; }
  /// Starts the next packet.
  void reset();
  /// True between the first slot of a packet and its completion.
  [[nodiscard]] bool in_packet() const { return pkt_.slots != 0; }

 private:
  state feed_data(std::uint32_t idx, const rings::rx_response& slot);
  state feed_extra(const rings::rx_response& slot);
  state fail(rx_error e);

  rx_packet pkt_;
  bool expect_extra_ = false;
  bool more_data_ = false;
  std::uint32_t extras_ = 0;
  bool failed_ = false;
  rx_error error_ = rx_error::slot_status;
};

}  // namespace unetback::sim
