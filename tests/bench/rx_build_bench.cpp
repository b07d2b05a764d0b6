// Guest-RX response build (rings/rx_builder.hpp): for each packet taken from
// the TAP, the slots it needs and the grant-copy plan + responses over the RX
// requests copied out of the ring. One iteration fills a whole ring (256
// requests) with packets of one shape; no packet bytes are touched (the
// copies are planned, not made). Items = packets.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "unetback/rings/netif.hpp"
#include "unetback/rings/rx_builder.hpp"

namespace unetback::rings::bench {
namespace {

/// A full ring of posted RX requests, as netfront posts them (id == index).
std::vector<rx_request> posted_requests() {
  std::vector<rx_request> reqs(rx_back_ring::size);
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].id = static_cast<std::uint16_t>(i);
    reqs[i].gref = static_cast<grant_ref_t>(8 + i);
  }
  return reqs;
}

/// A frontend with every offload (what netfront and netfront-sim request).
offload_features full_features() {
  offload_features f;
  f.sg = true;
  f.gso_tcpv4 = true;
  f.gso_tcpv6 = true;
  f.ipv6_csum_offload = true;
  return f;
}

void build_ring(benchmark::State& state, const rx_packet_desc& p) {
  const std::vector<rx_request> reqs = posted_requests();
  const std::span<const rx_request> all(reqs);
  const offload_features f = full_features();
  std::int64_t packets = 0;
  rx_plan plan;  // reused, as rx_path reuses its plans
  for (auto _ : state) {
    std::size_t pos = 0;
    for (;;) {
      const auto needed = rx_slots_needed(p, f);
      if (!needed || pos + needed.value() > all.size()) {
        break;
      }
      const auto slots = build_rx(p, f, all.subspan(pos), plan);
      benchmark::DoNotOptimize(slots);
      benchmark::DoNotOptimize(plan.responses.data());
      pos += needed.value();
      ++packets;
    }
  }
  state.SetItemsProcessed(packets);
}

void BM_RxBuild_64B(benchmark::State& state) {
  rx_packet_desc p;
  p.length = 64;
  p.offload.csum_validated = true;
  build_ring(state, p);
}
BENCHMARK(BM_RxBuild_64B);

void BM_RxBuild_1500B_Partial(benchmark::State& state) {
  rx_packet_desc p;
  p.length = 1514;
  p.offload.csum_partial = true;
  build_ring(state, p);
}
BENCHMARK(BM_RxBuild_1500B_Partial);

void BM_RxBuild_64KiB_GsoHash(benchmark::State& state) {
  rx_packet_desc p;
  p.length = 65534;
  p.offload.csum_partial = true;
  p.offload.gso_type = gso_type::tcpv4;
  p.offload.gso_size = 1448;
  p.hash = rx_hash{true, _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP, 0x12345678};
  build_ring(state, p);
}
BENCHMARK(BM_RxBuild_64KiB_GsoHash);

}  // namespace
}  // namespace unetback::rings::bench
