#pragma once
// The data path of one vif: its queues (one worker thread each), the state
// they share (multicast list, hash configuration, TX credit) and, when the
// frontend set one up, its control-ring thread. The control plane builds one
// per connection from validated configuration, starts and stops it, and
// reads it; nothing here touches XenStore, files other than the queues' own
// state files, or the host's RX steering.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "unetback/datapath/control_ring.hpp"
#include "unetback/datapath/fault.hpp"
#include "unetback/datapath/queue.hpp"
#include "unetback/datapath/queue_config.hpp"
#include "unetback/datapath/vif_shared_state.hpp"
#include "unetback/platform/frame_port.hpp"
#include "unetback/platform/platform.hpp"
#include "unetback/rings/ids.hpp"

namespace unetback::datapath {

/// The frontend's control ring (feature-ctrl-ring).
struct ctrl_ring_config {
  grant_ref ref;            ///< ctrl-ring-ref
  evtchn_port port;         ///< event-channel-ctrl
  std::string thread_name;  ///< "vif<D>.<N>-ctrl" (<= 15 chars)
};

/// Everything one vif's data path runs on.
struct vif_datapath_config {
  std::vector<queue_config> queues;                         ///< validated, index order
  std::vector<std::unique_ptr<platform::frame_port>> taps;  ///< one per queue, same order
  std::optional<ctrl_ring_config> ctrl_ring;
  /// Called on a data-path thread; must only post to the control thread (XSA-90).
  fault_handler on_fault;
  /// Called on the control-ring thread after the guest's hash configuration
  /// changed (readers already see it); must only post. Whoever persists the
  /// configuration or reprograms steering does it on its own thread, from hash().
  std::function<void()> on_hash_published;
  /// The vif's log limits, kept across its connections (a fresh set when null).
  std::shared_ptr<util::log_limits> log_limits;
};

/// One queue's counters and its rings' indices, as the control plane reads them.
struct queue_status {
  queue_index index;
  queue_counters_snapshot counters;
  /// queue::ring_dump(): the shared and private ring indices, as
  /// `unetbackctl dump` prints them.
  std::string ring_dump;
};

class vif_datapath {
 public:
  /// Builds the queues and the control ring (nothing runs yet). `platform`
  /// must outlive the object.
  vif_datapath(platform::platform& platform, vif_datapath_config config);
  ~vif_datapath();
  vif_datapath(const vif_datapath&) = delete;
  vif_datapath& operator=(const vif_datapath&) = delete;

  /// A restarted daemon takes over the guest's hash configuration, which the
  /// guest will not send again. Before start(). False without a control ring
  /// or when `saved` is not a configuration the guest could have set.
  [[nodiscard]] bool restore_hash(const rings::hash_config& saved);
  /// Maps rings, binds ports, starts every worker and the control ring; all
  /// or nothing: on a throw nothing is left running.
  void start();
  /// Stops and joins every thread, unbinds, unmaps. Idempotent.
  void stop();
  /// After stop(), the vif gone for good: removes the queues' state files.
  void discard_state();

  /// request-multicast-control. The list survives filtering going off
  /// (netif.h; Linux keeps it): Windows XenVif toggles the key and never
  /// re-sends its addresses.
  void set_multicast_filtering(bool on);
  /// The vif's TX credit, over all its queues (0 bytes: unlimited).
  void set_rate(std::uint64_t bytes, std::chrono::microseconds interval);
  /// Queue `q` (every queue when nullopt) notifies the guest and reads its
  /// rings again. Returns the queues kicked. Throws std::invalid_argument
  /// for a queue the vif does not have.
  std::vector<unsigned> kick(std::optional<unsigned> q);

  [[nodiscard]] std::uint32_t num_queues() const;
  /// Every queue's counters and ring indices, in index order.
  [[nodiscard]] std::vector<queue_status> queue_statuses() const;
  /// The guest's hash configuration; nullopt without a control ring.
  [[nodiscard]] std::optional<hash_snapshot> hash() const;
  [[nodiscard]] std::optional<ctrl_ring_counters> ctrl_counters() const;
  [[nodiscard]] bool has_ctrl_ring() const { return ctrl_ != nullptr; }
  /// Queue 0's TAP fd: the TAP's steering program attaches through it.
  [[nodiscard]] int first_tap_fd() const { return first_tap_fd_; }
  /// The vif's log limits (the config's, or the data path's own).
  [[nodiscard]] util::log_limits& log_limits() const { return shared_->log_limits(); }

 private:
  std::shared_ptr<vif_shared_state> shared_;
  std::vector<std::unique_ptr<queue>> queues_;
  std::unique_ptr<control_ring> ctrl_;
  int first_tap_fd_ = -1;
};

}  // namespace unetback::datapath
