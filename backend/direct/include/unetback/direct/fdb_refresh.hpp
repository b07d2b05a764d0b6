#pragma once
// Keeping the bridge's FDB entry of a paired guest alive (docs/direct-path.md,
// "The bridge keeps learning"). A paired guest's unicast to its peer no longer
// crosses the bridge, so the bridge stops hearing its MAC; after the bridge's
// ageing time the entry would expire, the pair would fall back to the TAP path
// and come back once the bridge learned the MAC again. So when the entry has
// aged past a third of the ageing time, the guest's queue writes one learning frame
// through its TAP: from the guest's MAC to the guest's MAC. The bridge learns
// the source on the ingress port and, finding the destination on that same
// port, forwards the frame nowhere (it would only go back out with hairpin
// mode, and the guest drops an EtherType it does not speak).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "unetback/direct/pair_policy.hpp"
#include "unetback/tap/mac.hpp"

namespace unetback::direct {

/// IEEE 802 Local Experimental EtherType 1: no host or guest stack takes it.
inline constexpr std::uint16_t learning_ethertype = 0x88B5;
/// The shortest Ethernet frame without its FCS.
inline constexpr std::size_t learning_frame_bytes = 60;

using learning_frame = std::array<std::byte, learning_frame_bytes>;

/// The learning frame of the guest whose MAC is `mac`: to and from `mac`,
/// EtherType learning_ethertype, zero payload.
[[nodiscard]] constexpr learning_frame make_learning_frame(const tap::mac_address& mac) {
  learning_frame f{};
  const auto put_mac = [&f, &mac](std::size_t at) {
    std::transform(mac.begin(), mac.end(), f.begin() + static_cast<std::ptrdiff_t>(at),
                   [](std::uint8_t b) { return static_cast<std::byte>(b); });
  };
  put_mac(0);
  put_mac(mac.size());
  f[12] = static_cast<std::byte>(learning_ethertype >> 8);
  f[13] = static_cast<std::byte>(learning_ethertype & 0xFF);
  return f;
}

/// Whether the guest of `port` should send a learning frame now: the bridge
/// gives its MAC this port, ages entries (ageing time > 0), and has not heard
/// the MAC for a third of the ageing time (probes a second apart then still
/// leave most of it to spare on a bridge aged in seconds).
[[nodiscard]] constexpr bool fdb_refresh_due(const port_facts& port, const bridge_facts& bridge) {
  return port.fdb_age_cs && bridge.ageing_time_cs > 0 &&
         std::uint64_t{*port.fdb_age_cs} * 3 >= bridge.ageing_time_cs;
}

}  // namespace unetback::direct
