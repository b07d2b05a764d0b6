// vnet_hdr mapping (rings/vnet_hdr.hpp), per packet:
//  guest TX -> TAP: parse L2-L4 of the private copy, write the pseudo-header
//    seed, fill the virtio_net_hdr (checksum offload; GSO for a 64 KiB TSO frame);
//  TAP -> guest RX: interpret the virtio_net_hdr; either keep the checksum
//    partial (cheap) or, for a frontend without feature-ipv6-csum-offload,
//    complete it in software over the whole segment (the expensive path).
// Items = packets; bytes (software checksum only) = frame bytes summed.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "test_frames.hpp"
#include "unetback/rings/vnet_hdr.hpp"

namespace unetback::rings::bench {
namespace {

test::frame tcp4(std::size_t payload) {
  return test::ipv4_frame(ipproto_tcp, test::ip_a, test::ip_b,
                          test::tcp_segment(40000, 5201, 0x10, payload));
}

test::frame tcp6(std::size_t payload) {
  return test::ipv6_frame(ipproto_tcp, test::ip6_a, test::ip6_b,
                          test::tcp_segment(40000, 5201, 0x10, payload));
}

void guest_tx(benchmark::State& state, test::frame f, const tx_offload& off) {
  const std::span<std::byte> frame(f);
  for (auto _ : state) {
    const auto v = guest_tx_to_vnet(frame, off);
    if (!v) {
      state.SkipWithError(to_string(v.error()));
      return;
    }
    benchmark::DoNotOptimize(v.value().hdr);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void BM_VnetTx_Csum_Tcp4_1500(benchmark::State& state) {
  guest_tx(state, tcp4(1460), tx_offload{true, false, gso_type::none, 0});
}
BENCHMARK(BM_VnetTx_Csum_Tcp4_1500);

void BM_VnetTx_Csum_Tcp6_1500(benchmark::State& state) {
  guest_tx(state, tcp6(1440), tx_offload{true, false, gso_type::none, 0});
}
BENCHMARK(BM_VnetTx_Csum_Tcp6_1500);

void BM_VnetTx_Gso_Tcp4_64KiB(benchmark::State& state) {
  guest_tx(state, tcp4(65000), tx_offload{true, false, gso_type::tcpv4, 1448});
}
BENCHMARK(BM_VnetTx_Gso_Tcp4_64KiB);

/// A NEEDS_CSUM header as the kernel writes it for a TCP frame whose L4
/// header starts at `l4_offset`.
vnet_header partial_header(std::size_t l4_offset, std::uint8_t gso, std::uint16_t mss) {
  vnet_header h;
  h.flags = vnet_f_needs_csum;
  h.csum_start = static_cast<std::uint16_t>(l4_offset);
  h.csum_offset = 16;  // TCP checksum field
  h.gso_type = gso;
  h.gso_size = mss;
  h.hdr_len = static_cast<std::uint16_t>(l4_offset + 20);
  return h;
}

void guest_rx(benchmark::State& state, test::frame f, const vnet_header& h,
              const offload_features& features) {
  const std::span<std::byte> frame(f);
  const std::size_t field = std::size_t{h.csum_start} + h.csum_offset;
  const std::byte seed_hi = f[field];
  const std::byte seed_lo = f[field + 1];
  for (auto _ : state) {
    f[field] = seed_hi;  // a completed checksum would change the next round's input
    f[field + 1] = seed_lo;
    const auto r = vnet_to_guest_rx(h, frame, features);
    if (!r) {
      state.SkipWithError(to_string(r.error()));
      return;
    }
    benchmark::DoNotOptimize(r.value());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  if (!features.ipv6_csum_offload) {  // the software checksum reads every byte
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(f.size()));
  }
}

offload_features features(bool ipv6_csum) {
  offload_features f;
  f.sg = true;
  f.gso_tcpv4 = true;
  f.gso_tcpv6 = ipv6_csum;
  f.ipv6_csum_offload = ipv6_csum;
  return f;
}

void BM_VnetRx_Partial_Gso_Tcp4_64KiB(benchmark::State& state) {
  guest_rx(state, tcp4(65000), partial_header(34, vnet_gso_tcpv4, 1448), features(true));
}
BENCHMARK(BM_VnetRx_Partial_Gso_Tcp4_64KiB);

void BM_VnetRx_Partial_Tcp6_1500(benchmark::State& state) {
  guest_rx(state, tcp6(1440), partial_header(54, vnet_gso_none, 0), features(true));
}
BENCHMARK(BM_VnetRx_Partial_Tcp6_1500);

void BM_VnetRx_CompleteCsum_Tcp6_1500(benchmark::State& state) {
  guest_rx(state, tcp6(1440), partial_header(54, vnet_gso_none, 0), features(false));
}
BENCHMARK(BM_VnetRx_CompleteCsum_Tcp6_1500);

}  // namespace
}  // namespace unetback::rings::bench
