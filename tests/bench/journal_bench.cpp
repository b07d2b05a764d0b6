// The response journal's checksum (backend/datapath/src/response_journal.hpp),
// computed once per sweep over the sweep's responses at commit. Items =
// responses; compare with the per-packet costs of tx_parse_bench and
// rx_build_bench.

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>

#include "response_journal.hpp"
#include "unetback/rings/netif.hpp"

namespace unetback::datapath::bench {
namespace {

template <class Rsp>
void checksum_sweep(benchmark::State& state) {
  std::array<Rsp, 256> slots{};
  const auto n = static_cast<std::size_t>(state.range(0));
  std::uint64_t head = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(journal_checksum(++head, slots.data(), n * sizeof(Rsp)));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_JournalChecksum_Tx(benchmark::State& state) {
  checksum_sweep<rings::tx_response>(state);
}
void BM_JournalChecksum_Rx(benchmark::State& state) {
  checksum_sweep<rings::rx_response>(state);
}
BENCHMARK(BM_JournalChecksum_Tx)->Arg(1)->Arg(64)->Arg(256);
BENCHMARK(BM_JournalChecksum_Rx)->Arg(1)->Arg(64)->Arg(256);

}  // namespace
}  // namespace unetback::datapath::bench
