#pragma once
// Per-vif state shared by the vif's queues and its control ring: the
// guest's multicast filter list and its receive-hashing configuration.
// Read-mostly; the read side (every RX worker, per packet) is lock-free.
// Writers (a TX worker applying an MCAST extra, the control-ring thread)
// serialise on a mutex and publish through atomics, so readers see either
// the old or the new value of each entry (multicast) or a consistent
// snapshot (hash config, seqlock over atomic words).

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "unetback/datapath/vif_credit.hpp"
#include "unetback/platform/frame_port.hpp"
#include "unetback/rings/ctrl_ring.hpp"
#include "unetback/util/log_limits.hpp"

namespace unetback::datapath {

/// A MAC address.
using mac_address = std::array<std::uint8_t, 6>;

/// Result of a multicast-filter addition.
enum class mcast_add_result : std::uint8_t { added, already_present, list_full };

/// A hash configuration and the generation it was published as.
struct hash_snapshot {
  rings::hash_config config;
  std::uint64_t generation = 0;
};

/// Shared per-vif state. Create once per vif with
/// std::make_shared<vif_shared_state>(num_queues) and hand it to every queue
/// and to the control ring.
class vif_shared_state {
 public:
  /// Most multicast addresses a guest may register (Linux XEN_NETBK_MCAST_MAX).
  static constexpr std::size_t max_multicast = 64;

  /// `num_queues`: multi-queue-num-queues of the connection. `log_limits`:
  /// the vif's, which outlive its connections (a fresh set when null).
  explicit vif_shared_state(std::uint32_t num_queues,
                            std::shared_ptr<util::log_limits> log_limits = nullptr);
  vif_shared_state(const vif_shared_state&) = delete;
  vif_shared_state& operator=(const vif_shared_state&) = delete;

  /// The number of queues of this vif.
  [[nodiscard]] std::uint32_t num_queues() const { return num_queues_; }

  /// Whether RX drops multicast frames not in the list
  /// (request-multicast-control). Set at connect, or when the dynamic key
  /// changes.
  void set_multicast_filtering(bool on) { filtering_.store(on, std::memory_order_relaxed); }
  [[nodiscard]] bool multicast_filtering() const {
    return filtering_.load(std::memory_order_relaxed);
  }
  /// Adds `mac` (MCAST_ADD extra). Bounded by max_multicast.
  mcast_add_result multicast_add(const mac_address& mac);
  /// Removes `mac` if present (MCAST_DEL extra).
  void multicast_del(const mac_address& mac);
  /// True if `mac` is in the list. Lock-free.
  [[nodiscard]] bool multicast_match(const mac_address& mac) const;
  /// Entries in the list. It lives as long as the connection: turning
  /// filtering off keeps it (netif.h).
  [[nodiscard]] std::size_t multicast_count() const;

  /// Called after every hash publication, on the publishing (control-ring)
  /// thread, once readers can see it. Must not throw; must only post (the
  /// control plane persists and steers on its own thread, from read_hash()).
  using hash_observer = std::function<void()>;
  /// Sets the observer; call before the control ring starts.
  void set_hash_observer(hash_observer observer) { hash_observer_ = std::move(observer); }

  /// Publishes a new hash configuration (control-ring thread).
  void publish_hash(const rings::hash_config& config);
  /// Generation of the latest published configuration (0: none yet). Cheap:
  /// workers compare it with their cached copy's generation.
  [[nodiscard]] std::uint64_t hash_generation() const;
  /// A consistent copy of the latest configuration. Lock-free; retries while
  /// a publication is in progress.
  [[nodiscard]] hash_snapshot read_hash() const;

  /// Guest RX stalls over the vif's queues, as Linux's netback turns its
  /// carrier off and on: off when a first queue stalls, on again when the
  /// last stalled queue has buffers. `tap` is the calling queue's port.
  /// Returns what setting the carrier returned (0 or -errno; 0 if unchanged).
  long rx_stalled(platform::frame_port& tap);
  long rx_ready(platform::frame_port& tap);

  /// The vif's log limits (UNETBACK_LOG_LIMITED), for lines its guest triggers.
  [[nodiscard]] util::log_limits& log_limits() const { return *log_limits_; }

  /// The guest's TX `rate` credit, over all the vif's queues.
  [[nodiscard]] vif_credit& credit() { return credit_; }
  [[nodiscard]] const vif_credit& credit() const { return credit_; }

 private:
  /// The seqlock publication of `config` (under write_mutex_).
  void store_hash(const rings::hash_config& config);

  // algorithm, flags, mapping_size, key (10 words), mapping (128 words)
  static constexpr std::size_t key_words = rings::max_hash_key_size / 4;
  static constexpr std::size_t hash_words = 3 + key_words + rings::max_hash_mapping_size;

  std::uint32_t num_queues_;
  std::shared_ptr<util::log_limits> log_limits_;
  std::atomic<bool> filtering_{false};
  std::mutex write_mutex_;
  std::array<std::atomic<std::uint64_t>, max_multicast> mcast_{};  // bit 63: valid
  std::atomic<std::size_t> mcast_count_{0};
  std::atomic<std::uint64_t> hash_seq_{0};  // odd while a publication is in progress
  std::array<std::atomic<std::uint32_t>, hash_words> hash_{};
  hash_observer hash_observer_;
  std::mutex carrier_mutex_;  // a count and its carrier change, together
  std::uint32_t stalled_queues_ = 0;
  vif_credit credit_;
};

}  // namespace unetback::datapath
