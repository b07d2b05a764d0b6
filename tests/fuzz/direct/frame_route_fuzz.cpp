// Fuzzes route_tx_frame with a guest frame, its offload request and a peer's
// features; a frame sent direct must satisfy every rule of docs/direct-path.md.
// Input: offload byte, features byte, MTU (2 bytes, big endian), the frame.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "unetback/direct/frame_route.hpp"

namespace {

using namespace unetback;  // NOLINT(google-build-using-namespace)

void require(bool ok) {
  if (!ok) {
    std::abort();
  }
}

constexpr tap::mac_address source{0x00, 0x16, 0x3e, 0, 0, 0x01};

/// The rules a direct frame must satisfy, checked on the bytes.
void check_direct(const std::vector<std::byte>& f, const direct::direct_peer& peer,
                  const rings::tx_offload& off) {
  require(f.size() >= 14);
  require((static_cast<std::uint8_t>(f[0]) & 1U) == 0);
  require(std::equal(peer.mac.begin(), peer.mac.end(), f.begin(), [](std::uint8_t m, std::byte b) {
    return m == static_cast<std::uint8_t>(b);
  }));
  require(std::equal(source.begin(), source.end(), f.begin() + 6, [](std::uint8_t m, std::byte b) {
    return m == static_cast<std::uint8_t>(b);
  }));
  if (off.gso_type == rings::gso_type::none) {
    require(f.size() - 14 <= peer.mtu);
  }
  require(f.size() <= 4096 || peer.rx.sg);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) {
    return 0;
  }
  const std::uint8_t o = data[0];
  const std::uint8_t r = data[1];
  const rings::tx_offload off{(o & 1) != 0, (o & 2) != 0, static_cast<std::uint8_t>((o >> 2) & 3),
                              static_cast<std::uint16_t>(o << 3)};
  direct::direct_peer peer;
  peer.mac = {0x00, 0x16, 0x3e, 0, 0, 0x02};
  peer.mtu = static_cast<std::uint32_t>(data[2] << 8 | data[3]);
  peer.rx = rings::offload_features{(r & 1) != 0, (r & 2) != 0, (r & 4) != 0, (r & 8) != 0,
                                    (r & 16) != 0};
  std::vector<std::byte> frame(size - 4);
  std::memcpy(frame.data(), data + 4, frame.size());
  const std::array peers{peer};
  const auto route = direct::route_tx_frame(direct::tx_frame{frame, off}, source, peers);
  if (route.direct()) {
    require(route.peer == 0);
    check_direct(frame, peer, off);
  }
  return 0;
}
