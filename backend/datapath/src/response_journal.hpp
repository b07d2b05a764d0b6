#pragma once
// The response journal of one back ring. netif.h gives a response the slot of
// the request it answers, so writing a sweep's responses destroys requests; a
// daemon killed after writing some of them but before publishing rsp_prod
// would leave its successor damaged requests where it expects to resume
// (restart without reconnect, docs/reliability.md). The journal closes that
// window: a sweep's responses are staged in memory that outlives the process
// (queue_state, a shared mapping of a tmpfs file), the journal records
// "rsp_prod was B, N responses follow", and only then are they copied into
// the ring and published. The successor replays a journal whose B is still
// the shared rsp_prod, and ignores one that was published.

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>

#include "unetback/rings/shared_ring.hpp"

namespace unetback::datapath {

/// The journal's memory (inside queue_state's mapping): plain data only.
template <class Rsp, std::uint32_t Slots>
struct journal_area {
  /// rsp_prod before the sweep (high 32 bits) and the sweep's slot count.
  std::atomic<std::uint64_t> base_and_count{0};
  /// journal_checksum() of base_and_count and the sweep's slots.
  std::atomic<std::uint64_t> checksum{0};
  std::array<Rsp, Slots> slots{};
};

/// A checksum of a journal record: `head` and `bytes`, eight bytes at a time
/// (a multiply-rotate mix; it detects damage, not forgery: the state file is
/// private to the daemon, util/private_file.hpp).
[[nodiscard]] inline std::uint64_t journal_checksum(std::uint64_t head, const void* bytes,
                                                    std::size_t n) {
  constexpr std::uint64_t k = 0x9E3779B97F4A7C15ULL;
  std::uint64_t h = (head ^ 0x5851F42D4C957F2DULL) * k;
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (std::size_t at = 0; at < n; at += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + at, std::min<std::size_t>(8, n - at));
    h = std::rotl(h ^ w, 29) * k;
  }
  return h ^ (h >> 32);
}

/// What a journal found at resume.
struct journal_replay {
  std::uint32_t base = 0;   ///< the shared rsp_prod it was written at
  std::uint32_t slots = 0;  ///< responses written into the ring again
};

template <class Req, class Rsp>
class response_journal {
 public:
  using ring = rings::back_ring<Req, Rsp>;
  using area = journal_area<Rsp, ring::size>;

  explicit response_journal(area& a) : area_(a) {}

  /// Stages the sweep's next response (slot rsp_prod_pvt + staged()).
  /// A sweep answers only what it consumed, at most ring::size slots; more
  /// would be a bug of ours, and are not written beyond the journal.
  void stage(const Rsp& rsp) {
    if (staged_ < ring::size) {
      area_.slots[staged_++] = rsp;
    }
  }
  [[nodiscard]] std::uint32_t staged() const { return staged_; }
  /// replay() found an unpublished record whose checksum did not match.
  [[nodiscard]] bool damaged() const { return damaged_; }

  /// Journals the staged responses, writes them into their slots and
  /// publishes them; returns whether the frontend asked for a kick.
  [[nodiscard]] bool commit(ring& r) {
    if (staged_ == 0) {
      return false;
    }
    const std::uint64_t head = pack(r.rsp_prod_pvt(), staged_);
    area_.checksum.store(checksum_of(head, staged_), std::memory_order_relaxed);
    area_.base_and_count.store(head, std::memory_order_relaxed);
    // Journal first, ring slots after: a kill between them leaves a journal
    // that describes every slot written.
    std::atomic_thread_fence(std::memory_order_release);
    for (std::uint32_t i = 0; i < staged_; ++i) {
      r.write_response(area_.slots[i]);
    }
    staged_ = 0;
    return r.push_responses_and_check_notify();
  }

  /// On resume, right after the ring was attached (req_cons = rsp_prod_pvt =
  /// the shared rsp_prod): the sweep the previous process journaled at this
  /// rsp_prod and did not publish, if any. Nothing when the journal was
  /// published, does not fit the ring (more slots than the frontend has
  /// requests outstanding), or is damaged (its checksum does not match:
  /// damaged() is then true). Reads only; replay() applies it.
  std::optional<journal_replay> pending(const ring& r) {
    const std::uint64_t v = area_.base_and_count.load(std::memory_order_relaxed);
    const journal_replay j{static_cast<std::uint32_t>(v >> 32), static_cast<std::uint32_t>(v)};
    const auto outstanding = r.unconsumed_requests();
    if (j.slots == 0 || j.slots > ring::size || j.base != r.rsp_prod_pvt() || !outstanding ||
        outstanding.value() < j.slots) {
      return std::nullopt;
    }
    if (checksum_of(v, j.slots) != area_.checksum.load(std::memory_order_relaxed)) {
      damaged_ = true;
      return std::nullopt;
    }
    return j;
  }

  /// Writes and publishes the responses of `j` (from pending()) and consumes
  /// its requests, which were already acted on.
  void replay(ring& r, const journal_replay& j) {
    r.consume(j.slots);
    for (std::uint32_t i = 0; i < j.slots; ++i) {
      r.write_response(area_.slots[i]);
    }
    (void)r.push_responses_and_check_notify();  // resume kicks every port anyway
  }

 private:
  static std::uint64_t pack(std::uint32_t base, std::uint32_t count) {
    return (std::uint64_t{base} << 32) | count;
  }
  [[nodiscard]] std::uint64_t checksum_of(std::uint64_t head, std::uint32_t count) const {
    return journal_checksum(head, area_.slots.data(), std::size_t{count} * sizeof(Rsp));
  }

  area& area_;
  std::uint32_t staged_ = 0;
  bool damaged_ = false;
};

}  // namespace unetback::datapath
