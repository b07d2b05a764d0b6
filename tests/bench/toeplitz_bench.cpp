// Toeplitz RX-queue selection (rings/toeplitz.hpp): building the hash input
// from the frame's headers and hashing it with a 40-byte key, per packet, for
// IPv4/TCP (12 input bytes) and IPv6/TCP (36 input bytes). Items = packets.

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <span>

#include "test_frames.hpp"
#include "unetback/rings/toeplitz.hpp"

namespace unetback::rings::bench {
namespace {

// The Microsoft RSS verification-suite key (40 bytes), also Linux's default.
constexpr std::array<std::uint8_t, 40> rss_key{
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

constexpr std::uint32_t all_types =
    XEN_NETIF_CTRL_HASH_TYPE_IPV4 | XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP |
    XEN_NETIF_CTRL_HASH_TYPE_IPV6 | XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP;

void hash_frame(benchmark::State& state, const test::frame& f) {
  const std::span<const std::byte> frame(f);
  for (auto _ : state) {
    const auto in = build_hash_input(frame, all_types);
    if (!in) {
      state.SkipWithError("no hash input");
      return;
    }
    benchmark::DoNotOptimize(toeplitz_hash(rss_key, in->data()));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void BM_Toeplitz_Ipv4Tcp(benchmark::State& state) {
  hash_frame(state, test::ipv4_frame(ipproto_tcp, test::ip_a, test::ip_b,
                                     test::tcp_segment(40000, 5201, 0x10, 1448)));
}
BENCHMARK(BM_Toeplitz_Ipv4Tcp);

void BM_Toeplitz_Ipv6Tcp(benchmark::State& state) {
  hash_frame(state, test::ipv6_frame(ipproto_tcp, test::ip6_a, test::ip6_b,
                                     test::tcp_segment(40000, 5201, 0x10, 1428)));
}
BENCHMARK(BM_Toeplitz_Ipv6Tcp);

/// The hash alone over a 36-byte input: the part a table-driven Toeplitz would speed up.
void BM_Toeplitz_HashOnly36B(benchmark::State& state) {
  std::array<std::byte, 36> input{};
  for (std::size_t i = 0; i < input.size(); ++i) {
    input[i] = static_cast<std::byte>(i * 7 + 1);
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(input.data());
    benchmark::DoNotOptimize(toeplitz_hash(rss_key, input));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Toeplitz_HashOnly36B);

}  // namespace
}  // namespace unetback::rings::bench
