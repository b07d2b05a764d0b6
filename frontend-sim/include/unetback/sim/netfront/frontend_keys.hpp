#pragma once
// The XenStore side of the netfront handshake, the pure part
// (docs/protocol.md §1.5-1.8): parsing what the backend advertises and
// building the keys the frontend writes in one transaction.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "unetback/rings/ids.hpp"

namespace unetback::sim {

/// The backend's advertised features (backend dir keys, §1.6). Absent keys
/// take the protocol defaults.
struct backend_features {
  bool rx_copy = false;               ///< feature-rx-copy (required)
  bool sg = false;                    ///< feature-sg
  bool gso_tcpv4 = false;             ///< feature-gso-tcpv4
  bool gso_tcpv6 = false;             ///< feature-gso-tcpv6
  bool ipv6_csum_offload = false;     ///< feature-ipv6-csum-offload
  bool split_event_channels = false;  ///< feature-split-event-channels
  bool ctrl_ring = false;             ///< feature-ctrl-ring
  bool multicast_control = false;     ///< feature-multicast-control
  bool multi_queue = false;           ///< multi-queue-max-queues present
  std::uint32_t max_queues = 1;       ///< multi-queue-max-queues (default 1)
};

/// Reads a key of the backend dir (relative name), nullopt if absent.
using key_reader = std::function<std::optional<std::string>(std::string_view key)>;

/// Parses the backend's feature keys strictly (decimal, no junk). Throws
/// std::runtime_error naming the key on a malformed value.
[[nodiscard]] backend_features read_backend_features(const key_reader& read);

/// What the frontend asks for (command line).
struct frontend_request {
  std::uint32_t queues = 1;
  bool split_event_channels = false;
  bool sg = true;
  bool gso = true;  ///< feature-gso-tcpv4/v6
  bool ipv6_csum_offload = true;
  bool no_csum_offload = false;  ///< feature-no-csum-offload: full checksums both ways
  bool ctrl_ring = false;
  /// request-multicast-control (when the backend offers feature-multicast-control)
  bool multicast_control = false;
  /// Payload bytes per TX data slot (tx_slots.hpp); the page, as Linux.
  std::uint32_t tx_slot_bytes = 4096;
};

/// One queue's shared resources, as granted/allocated.
struct queue_keys {
  grant_ref tx_ring_ref;
  grant_ref rx_ring_ref;
  evtchn_port tx_port;  ///< event-channel-tx, or event-channel when not split
  evtchn_port rx_port;  ///< event-channel-rx (split only)
  bool split = false;
};

/// The control ring's resources, if any.
struct ctrl_keys {
  grant_ref ring_ref;
  evtchn_port port;
};

/// The number of queues to use: min(requested, advertised max), at least 1.
[[nodiscard]] std::uint32_t negotiate_queues(const frontend_request& req,
                                             const backend_features& be);

/// The (relative key, value) pairs to write in one transaction: queue keys
/// (flat for one queue, queue-K/ otherwise), multi-queue-num-queues (only if
/// the backend advertised multi-queue), request-rx-copy, feature-rx-notify,
/// feature-sg, feature-gso-tcpv4/v6, feature-ipv6-csum-offload,
/// feature-no-csum-offload, request-multicast-control and the control ring keys.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> build_frontend_keys(
    const frontend_request& req, const backend_features& be, const std::vector<queue_keys>& queues,
    const std::optional<ctrl_keys>& ctrl);

/// Parses a XenbusState value; nullopt if malformed or out of range.
[[nodiscard]] std::optional<int> parse_xenbus_state(std::string_view s);

}  // namespace unetback::sim
