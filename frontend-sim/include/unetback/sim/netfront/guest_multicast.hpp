#pragma once
// The guest interface's link-layer multicast list: what a guest kernel hands
// its netfront (Linux ndo_set_rx_mode, Windows NDIS's multicast OIDs) to
// forward to the backend as XEN_NETIF_EXTRA_TYPE_MCAST_ADD/DEL
// (docs/protocol.md, multicast control).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace unetback::sim {

using mac_bytes = std::array<std::uint8_t, 6>;

/// The addresses of `ifname` in a /proc/net/dev_mcast text ("index name
/// users global-users hex-address" per line), in file order; malformed
/// lines are skipped.
[[nodiscard]] std::vector<mac_bytes> parse_dev_mcast(std::string_view text,
                                                     std::string_view ifname);

/// The multicast list of `ifname` in /run/netns/<netns> (empty: ours).
/// Throws std::system_error when the namespace or the file cannot be read.
[[nodiscard]] std::vector<mac_bytes> read_multicast_list(const std::string& netns,
                                                         const std::string& ifname);

}  // namespace unetback::sim
