#pragma once
// The grant copies of one sweep: one copy call for all of them. On Xen each
// call is a system call (the gntdev ioctl) plus hypercalls. A path adds its
// segments, remembers where they start, and after issue() reads back its own
// statuses.

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "unetback/datapath/queue_counters.hpp"
#include "unetback/platform/grant_table.hpp"
#include "unetback/rings/netif.hpp"

namespace unetback::datapath {

class copy_batch {
 public:
  /// One segment per TX data slot or per RX slot: never more than a ring.
  static constexpr std::size_t capacity =
      std::max(rings::tx_back_ring::size, rings::rx_back_ring::size);

  copy_batch() { segs_.reserve(capacity); }

  void clear() { segs_.clear(); }
  [[nodiscard]] std::size_t size() const { return segs_.size(); }
  void add(const platform::grant_copy_segment& s) { segs_.push_back(s); }
  /// Drops the segments from `n` on (a path that faulted takes its own back).
  void truncate(std::size_t n) { segs_.resize(std::min(n, segs_.size())); }

  /// One copy call for every segment added; each segment's status is set.
  void issue(platform::grant_table& grants, queue_counters& c) {
    if (segs_.empty()) {
      return;
    }
    bump(c.grant_copy_calls);
    bump(c.grant_copy_segments, segs_.size());
    (void)grants.copy(segs_);  // a whole-call failure also sets every status
  }

  /// Segments [first, first + count) after issue().
  [[nodiscard]] std::span<const platform::grant_copy_segment> range(std::size_t first,
                                                                    std::size_t count) const {
    return std::span(segs_).subspan(first, count);
  }

 private:
  std::vector<platform::grant_copy_segment> segs_;
};

}  // namespace unetback::datapath
