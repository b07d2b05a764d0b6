#include "unetback/datapath/vif_shared_state.hpp"

#include <algorithm>
#include <utility>

namespace unetback::datapath {
namespace {

constexpr std::uint64_t valid_bit = std::uint64_t{1} << 63;

std::uint64_t encode(const mac_address& mac) {
  std::uint64_t v = valid_bit;
  for (std::size_t i = 0; i < mac.size(); ++i) {
    v |= static_cast<std::uint64_t>(mac[i]) << (8 * i);
  }
  return v;
}

constexpr std::size_t max_read_attempts = 64;

}  // namespace

vif_shared_state::vif_shared_state(std::uint32_t num_queues,
                                   std::shared_ptr<util::log_limits> log_limits)
    : num_queues_(num_queues),
      log_limits_(log_limits ? std::move(log_limits) : std::make_shared<util::log_limits>()) {}

long vif_shared_state::rx_stalled(platform::frame_port& tap) {
  std::lock_guard lock(carrier_mutex_);
  return stalled_queues_++ == 0 ? tap.set_carrier(false) : 0;
}

long vif_shared_state::rx_ready(platform::frame_port& tap) {
  std::lock_guard lock(carrier_mutex_);
  if (stalled_queues_ == 0) {
    return 0;
  }
  return --stalled_queues_ == 0 ? tap.set_carrier(true) : 0;
}

mcast_add_result vif_shared_state::multicast_add(const mac_address& mac) {
  const std::uint64_t want = encode(mac);
  std::lock_guard lock(write_mutex_);
  std::atomic<std::uint64_t>* free_slot = nullptr;
  for (auto& entry : mcast_) {
    const std::uint64_t v = entry.load(std::memory_order_relaxed);
    if (v == want) {
      return mcast_add_result::already_present;
    }
    if (v == 0 && free_slot == nullptr) {
      free_slot = &entry;
    }
  }
  if (free_slot == nullptr) {
    return mcast_add_result::list_full;
  }
  free_slot->store(want, std::memory_order_release);
  mcast_count_.fetch_add(1, std::memory_order_relaxed);
  return mcast_add_result::added;
}

void vif_shared_state::multicast_del(const mac_address& mac) {
  const std::uint64_t want = encode(mac);
  std::lock_guard lock(write_mutex_);
  for (auto& entry : mcast_) {
    if (entry.load(std::memory_order_relaxed) == want) {
      entry.store(0, std::memory_order_release);
      mcast_count_.fetch_sub(1, std::memory_order_relaxed);
      return;
    }
  }
}

bool vif_shared_state::multicast_match(const mac_address& mac) const {
  const std::uint64_t want = encode(mac);
  return std::any_of(mcast_.begin(), mcast_.end(), [want](const std::atomic<std::uint64_t>& e) {
    return e.load(std::memory_order_acquire) == want;
  });
}

std::size_t vif_shared_state::multicast_count() const {
  return mcast_count_.load(std::memory_order_relaxed);
}

// Seqlock without standalone fences (so ThreadSanitizer models it): the
// writer stores an odd sequence, then every word with release (each word is
// ordered after the odd sequence), then the even sequence with release. A
// reader that acquires a new word therefore also sees the odd (or a later)
// sequence on its second read, and retries.
void vif_shared_state::publish_hash(const rings::hash_config& c) {
  store_hash(c);
  // Outside write_mutex_: a TX worker applying a multicast extra takes it.
  if (hash_observer_) {
    hash_observer_();
  }
}

void vif_shared_state::store_hash(const rings::hash_config& c) {
  std::lock_guard lock(write_mutex_);
  const std::uint64_t seq = hash_seq_.load(std::memory_order_relaxed);
  hash_seq_.store(seq + 1, std::memory_order_relaxed);
  std::size_t w = 0;
  hash_[w++].store(c.algorithm, std::memory_order_release);
  hash_[w++].store(c.flags, std::memory_order_release);
  hash_[w++].store(c.mapping_size, std::memory_order_release);
  for (std::size_t k = 0; k < key_words; ++k) {
    std::uint32_t word = 0;
    for (std::size_t b = 0; b < 4; ++b) {
      word |= static_cast<std::uint32_t>(c.key[k * 4 + b]) << (8 * b);
    }
    hash_[w++].store(word, std::memory_order_release);
  }
  for (std::uint32_t m : c.mapping) {
    hash_[w++].store(m, std::memory_order_release);
  }
  hash_seq_.store(seq + 2, std::memory_order_release);
}

std::uint64_t vif_shared_state::hash_generation() const {
  return hash_seq_.load(std::memory_order_acquire) / 2;
}

hash_snapshot vif_shared_state::read_hash() const {
  hash_snapshot out;
  for (std::size_t attempt = 0; attempt < max_read_attempts; ++attempt) {
    const std::uint64_t s1 = hash_seq_.load(std::memory_order_acquire);
    if ((s1 & 1) != 0) {
      continue;
    }
    std::size_t w = 0;
    out.config.algorithm = hash_[w++].load(std::memory_order_acquire);
    out.config.flags = hash_[w++].load(std::memory_order_acquire);
    out.config.mapping_size = hash_[w++].load(std::memory_order_acquire);
    for (std::size_t k = 0; k < key_words; ++k) {
      const std::uint32_t word = hash_[w++].load(std::memory_order_acquire);
      for (std::size_t b = 0; b < 4; ++b) {
        out.config.key[k * 4 + b] = static_cast<std::uint8_t>(word >> (8 * b));
      }
    }
    for (std::uint32_t& m : out.config.mapping) {
      m = hash_[w++].load(std::memory_order_acquire);
    }
    if (hash_seq_.load(std::memory_order_relaxed) == s1) {
      out.generation = s1 / 2;
      return out;
    }
  }
  // A writer kept publishing: report "no new configuration" (generation 0
  // means the caller keeps what it has); it retries on its next packet.
  return hash_snapshot{};
}

}  // namespace unetback::datapath
