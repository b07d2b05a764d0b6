// Guest-TX parse (rings/tx_parser.hpp): one worker sweep parses a private copy
// of up to a full ring (256 slots) of published requests, packet after packet.
// Shapes: a 1-slot small packet; a 3-data-slot packet with a GSO extra; an
// 18-data-slot (XEN_NETIF_NR_SLOTS_MIN) 64 KiB GSO packet. Items = packets.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "unetback/rings/netif.hpp"
#include "unetback/rings/tx_parser.hpp"

namespace unetback::rings::bench {
namespace {

constexpr std::size_t ring_slots = tx_back_ring::size;

/// Appends one packet of `data_slots` data slots (with a GSO extra when asked)
/// to `w`: the first slot carries `first_bytes`, each following slot `rest_bytes`.
void append_packet(std::vector<tx_request>& w, std::uint32_t data_slots, bool gso,
                   std::uint16_t first_bytes, std::uint16_t rest_bytes) {
  const auto id_of = [&w] { return static_cast<std::uint16_t>(w.size()); };
  const std::uint32_t total =
      first_bytes + (data_slots - 1) * static_cast<std::uint32_t>(rest_bytes);
  tx_request first{};
  first.gref = 8 + id_of();
  first.offset = 0;
  first.flags =
      static_cast<std::uint16_t>(tx_flags::csum_blank | (data_slots > 1 ? tx_flags::more_data : 0) |
                                 (gso ? tx_flags::extra_info : 0));
  first.id = id_of();
  first.size = static_cast<std::uint16_t>(total);
  w.push_back(first);
  if (gso) {
    extra_info e{};
    e.type = extra_type::gso;
    e.u.gso.size = 1448;
    e.u.gso.type = gso_type::tcpv4;
    tx_request slot{};
    std::memcpy(&slot, &e, sizeof(e));
    w.push_back(slot);
  }
  for (std::uint32_t k = 1; k < data_slots; ++k) {
    tx_request s{};
    s.gref = 8 + id_of();
    s.offset = 0;
    s.flags = k + 1 < data_slots ? tx_flags::more_data : 0;
    s.id = id_of();
    s.size = rest_bytes;
    w.push_back(s);
  }
}

/// As many whole packets of one shape as fit in a ring.
std::vector<tx_request> make_window(std::uint32_t data_slots, bool gso, std::uint16_t first_bytes,
                                    std::uint16_t rest_bytes) {
  std::vector<tx_request> w;
  const std::size_t per_packet = data_slots + (gso ? 1U : 0U);
  while (w.size() + per_packet <= ring_slots) {
    append_packet(w, data_slots, gso, first_bytes, rest_bytes);
  }
  return w;
}

/// Parses every packet of the window, as one worker sweep does.
void parse_window(benchmark::State& state, const std::vector<tx_request>& window) {
  const std::span<const tx_request> all(window);
  std::int64_t packets = 0;
  for (auto _ : state) {
    std::size_t pos = 0;
    while (pos < all.size()) {
      const tx_parse_result r = parse_tx_packet(all.subspan(pos));
      benchmark::DoNotOptimize(r.packet.segment_count);
      if (!r.ok()) {
        state.SkipWithError(to_string(r.error));
        return;
      }
      pos += r.packet.slots;
      ++packets;
    }
  }
  state.SetItemsProcessed(packets);
  state.counters["slots_per_packet"] =
      static_cast<double>(window.size()) /
      static_cast<double>(packets / static_cast<std::int64_t>(state.iterations()));
}

void BM_TxParse_1Slot(benchmark::State& state) {
  parse_window(state, make_window(1, false, 64, 0));
}
BENCHMARK(BM_TxParse_1Slot);

void BM_TxParse_3SlotGso(benchmark::State& state) {
  parse_window(state, make_window(3, true, 1000, 4096));
}
BENCHMARK(BM_TxParse_3SlotGso);

void BM_TxParse_18SlotGso(benchmark::State& state) {
  // 900 + 17 * 3800 = 65500 bytes: the largest packet netif's 16-bit size allows.
  parse_window(state, make_window(nr_slots_min, true, 900, 3800));
}
BENCHMARK(BM_TxParse_18SlotGso);

}  // namespace
}  // namespace unetback::rings::bench
