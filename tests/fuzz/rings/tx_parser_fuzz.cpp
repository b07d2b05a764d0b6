// Fuzzes the guest-TX parser the way the worker drives it: the input is a
// private copy of up to 256 request slots (after two bytes of limits); packets
// are parsed one after the other until the window ends or one is fatal.
// Every accepted or dropped packet must satisfy the invariants the worker
// relies on; a violation aborts.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "unetback/rings/tx_parser.hpp"

namespace {

using namespace unetback::rings;  // NOLINT(google-build-using-namespace)

void require(bool ok) {
  if (!ok) {
    std::abort();
  }
}

void check_packet(const tx_parse_result& r, std::size_t available) {
  const tx_packet& p = r.packet;
  require(p.slots >= 1 && p.slots <= available);
  require(p.slots == p.extra_count + p.data_slots);
  if (!r.ok()) {
    return;
  }
  require(p.segment_count <= p.data_slots && p.segment_count <= tx_max_data_slots);
  std::uint32_t sum = 0;
  for (std::uint32_t i = 0; i < p.segment_count; ++i) {
    const tx_segment& s = p.segments[i];
    require(s.size > 0 && s.offset + static_cast<std::uint32_t>(s.size) <= page_size);
    sum += s.size;
  }
  require(p.mcast != tx_mcast_op::none || (sum == p.total_size && p.total_size >= eth_hlen));
  // A multicast dummy packet carries no data; its other extras are ignored (Linux).
  require(p.mcast != tx_mcast_op::none || !p.has_gso ||
          (p.gso_size > 0 && (p.gso_type == gso_type::tcpv4 || p.gso_type == gso_type::tcpv6)));
  require(p.mcast == tx_mcast_op::none || p.segment_count == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) {
    return 0;
  }
  const tx_parser_limits lim{data[0] & 0x3FU, data[1] & 0x7FU, (data[0] & 0x80) != 0,
                             (data[1] & 0x80) != 0};
  data += 2;
  size -= 2;
  std::array<tx_request, 256> window{};
  const std::size_t n = std::min(size / sizeof(tx_request), window.size());
  std::memcpy(window.data(), data, n * sizeof(tx_request));
  std::size_t pos = 0;
  while (pos < n) {
    const auto r = parse_tx_packet(std::span<const tx_request>(window).subspan(pos, n - pos), lim);
    if (r.fatal()) {
      break;
    }
    check_packet(r, n - pos);
    pos += r.packet.slots;
  }
  return 0;
}
