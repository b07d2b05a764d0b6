#pragma once
// The log limits of one vif: one token bucket (rate_limit.hpp) per call site,
// owned by the vif and shared with its data path. A guest that floods a
// warning exhausts only its own vif's bucket for that line; the same warning
// about another vif still reaches the log (docs/security.md, "Log lines").

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "unetback/util/rate_limit.hpp"

namespace unetback::util {

class log_limits {
 public:
  /// Call sites with a bucket of their own; more share one (there are about
  /// 25 today). Fixed: no allocation when a line is logged.
  static constexpr std::size_t max_sites = 48;

  log_limits() = default;
  log_limits(const log_limits&) = delete;
  log_limits& operator=(const log_limits&) = delete;

  /// True if a line from call site `site` may be logged; `suppressed`
  /// receives how many from that site were dropped since the last allowed
  /// one. Lock-free; safe from any thread.
  bool allow(const void* site, std::uint64_t& suppressed) {
    return bucket_of(site).allow(suppressed);
  }

 private:
  struct site_bucket {
    std::atomic<const void*> site{nullptr};
    rate_limit bucket{log_burst, log_refill};
  };

  // A site's bucket: found, or claimed from the free ones (never released).
  rate_limit& bucket_of(const void* site) {
    for (site_bucket& b : buckets_) {
      const void* owner = b.site.load(std::memory_order_acquire);
      if (owner == nullptr &&
          (b.site.compare_exchange_strong(owner, site, std::memory_order_acq_rel) ||
           owner == site)) {
        return b.bucket;
      }
      if (owner == site) {
        return b.bucket;
      }
    }
    return shared_;
  }

  std::array<site_bucket, max_sites> buckets_{};
  rate_limit shared_{log_burst, log_refill};
};

}  // namespace unetback::util

/// Logs at most 10 lines per 5 s from this call site about the vif whose
/// log_limits `limits` are.
#define UNETBACK_LOG_LIMITED(limits, level, ...)                                          \
  do {                                                                                    \
    static const char unetback_site_ = 0;                                                 \
    std::uint64_t unetback_rl_suppressed_ = 0;                                            \
    if ((limits).allow(&unetback_site_, unetback_rl_suppressed_)) {                       \
      ::unetback::util::detail::log_allowed(level, unetback_rl_suppressed_, __VA_ARGS__); \
    }                                                                                     \
  } while (false)
