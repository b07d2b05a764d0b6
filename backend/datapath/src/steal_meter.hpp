#pragma once
// Whether dom0's vCPUs are overcommitted: the share of CPU time the
// hypervisor gave to other vCPUs while ours wanted to run ("steal" in
// /proc/stat), over the last interval. Then a busy-polling worker holds a
// physical CPU that a guest's vCPU (or dom0's own receiver) is waiting for:
// the lab measured spinning workers costing throughput and latency whenever
// Xen ran more vCPUs than it had CPUs (docs/performance.md, "Spinning").

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace unetback::datapath {

/// The all-CPU totals of /proc/stat's "cpu" line, in USER_HZ ticks.
struct cpu_times {
  std::uint64_t busy = 0;   ///< user + nice + system + irq + softirq
  std::uint64_t idle = 0;   ///< idle + iowait
  std::uint64_t steal = 0;  ///< runnable, but the hypervisor ran someone else
};

/// Parses the first line of /proc/stat ("cpu  user nice system idle iowait
/// irq softirq steal ..."); nullopt when it is not such a line.
[[nodiscard]] std::optional<cpu_times> parse_cpu_line(std::string_view text);

class steal_meter {
 public:
  static constexpr std::chrono::milliseconds interval{50};

  /// max_pct: steal above this share of the interval's CPU time is
  /// contention; >= 100 turns the meter off (never contended).
  explicit steal_meter(std::uint32_t max_pct);
  ~steal_meter();
  steal_meter(const steal_meter&) = delete;
  steal_meter& operator=(const steal_meter&) = delete;

  /// Reads /proc/stat at most once per interval; the last verdict otherwise.
  [[nodiscard]] bool contended(std::chrono::steady_clock::time_point now);

  /// The verdict for two readings (pure; what contended() applies).
  [[nodiscard]] static bool over(const cpu_times& before, const cpu_times& after,
                                 std::uint32_t max_pct);

 private:
  std::uint32_t max_pct_;
  int fd_ = -1;
  std::optional<cpu_times> last_;
  std::chrono::steady_clock::time_point next_{};
  bool contended_ = false;
};

}  // namespace unetback::datapath
