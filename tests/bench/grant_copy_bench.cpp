// Grant-copy batches over the sim platform (backend/platform/sim): a
// guest_domain and a sim_platform in one process, the backend copying packets
// of 64 B, 1500 B and 64 KiB out of the guest's granted pages (guest TX) or
// into them (guest RX), `batch` segments per grant_table::copy call (one
// ioctl/hypercall on real Xen). A segment never crosses a page: a 64 KiB
// packet is 16 segments. Items = segments; "packets" = packets/s.

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "unetback/platform/grant_table.hpp"
#include "unetback/sim/guest_domain.hpp"
#include "unetback/sim/sim_platform.hpp"
#include "unetback/test_support/temp_dir.hpp"

namespace unetback::bench {
namespace {

constexpr domid guest_id{7};
constexpr domid backend_id{0};
constexpr std::uint32_t max_batch = 64;
constexpr std::uint32_t page = 4096;

/// A temporary sim_dir with one guest whose pages are all granted to the backend.
class sim_world {
 public:
  sim_world() {
    sim::domain_config c;
    c.sim_dir = dir_;
    c.id = guest_id;
    c.page_count = max_batch + 8;
    c.grant_count = max_batch + sim::first_free_grant_ref + 8;
    c.port_count = 8;
    c.map_record_count = 8;
    guest_ = std::make_unique<sim::guest_domain>(c);
    for (std::uint32_t i = 0; i < max_batch; ++i) {
      refs_.push_back(
          guest_->grant_access(guest_->alloc_page(), backend_id, sim::grant_mode::read_write));
    }
    platform_ = std::make_unique<sim::sim_platform>(dir_, backend_id);
  }
  ~sim_world() {
    platform_.reset();
    guest_.reset();
  }
  sim_world(const sim_world&) = delete;
  sim_world& operator=(const sim_world&) = delete;

  [[nodiscard]] sim::sim_platform& platform() { return *platform_; }
  [[nodiscard]] grant_ref ref(std::uint32_t i) const { return refs_[i % refs_.size()]; }

 private:
  test_support::temp_dir tmp_{"unbbench-"};
  std::filesystem::path dir_ = tmp_.path();
  std::unique_ptr<sim::guest_domain> guest_;
  std::unique_ptr<sim::sim_platform> platform_;
  std::vector<grant_ref> refs_;
};

/// One copy call's segments: consecutive page-sized chunks of consecutive
/// packets, each chunk against its own granted guest page.
std::vector<platform::grant_copy_segment> make_batch(const sim_world& w, std::byte* local,
                                                     std::uint32_t packet_bytes,
                                                     std::uint32_t batch, bool to_guest) {
  const std::uint32_t segs_per_packet = (packet_bytes + page - 1) / page;
  std::vector<platform::grant_copy_segment> segs(batch);
  for (std::uint32_t i = 0; i < batch; ++i) {
    const std::uint32_t pkt = i / segs_per_packet;
    const std::uint32_t chunk = i % segs_per_packet;
    const std::uint32_t len = std::min(page, packet_bytes - chunk * page);
    std::byte* mine = local + std::size_t{pkt} * packet_bytes + std::size_t{chunk} * page;
    platform::grant_copy_segment& s = segs[i];
    s.len = static_cast<std::uint16_t>(len);
    if (to_guest) {
      s.source.virt = mine;
      s.dest.foreign = {w.ref(i).value(), 0, guest_id.value()};
      s.flags = GNTCOPY_dest_gref;
    } else {
      s.source.foreign = {w.ref(i).value(), 0, guest_id.value()};
      s.dest.virt = mine;
      s.flags = GNTCOPY_source_gref;
    }
  }
  return segs;
}

/// Args: packet bytes, segments per copy call, direction (0 guest TX, 1 guest RX).
void BM_GrantCopy(benchmark::State& state) {
  const auto packet_bytes = static_cast<std::uint32_t>(state.range(0));
  const auto batch = static_cast<std::uint32_t>(state.range(1));
  const bool to_guest = state.range(2) != 0;
  sim_world w;
  std::vector<std::byte> local(std::size_t{max_batch} * packet_bytes + page);
  auto segs = make_batch(w, local.data(), packet_bytes, batch, to_guest);
  auto gt = w.platform().open_grant_table();
  std::uint64_t bytes_per_call = 0;
  for (const auto& s : segs) {
    bytes_per_call += s.len;
  }
  for (auto _ : state) {
    if (!gt->copy(segs) || segs[0].status != GNTST_okay || segs[batch - 1].status != GNTST_okay) {
      state.SkipWithError("grant copy failed");
      return;
    }
  }
  const auto calls = static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * batch);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes_per_call));
  state.counters["packets"] = benchmark::Counter(
      calls * static_cast<double>(bytes_per_call) / packet_bytes, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GrantCopy)
    ->ArgNames({"bytes", "batch", "to_guest"})
    ->ArgsProduct({{64, 1500, 65536}, {1, 16, 64}, {0, 1}});

}  // namespace
}  // namespace unetback::bench
