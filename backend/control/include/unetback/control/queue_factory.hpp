#pragma once
// The seam between the vif (control plane) and the data path: the vif hands
// over its data path's configuration (datapath::vif_datapath_config: the
// validated queue configurations, one TAP queue each, the control ring and the
// callbacks that post to the control thread), and gets back an object it can
// start, stop and read counters from. The production implementation runs a
// datapath::vif_datapath; tests use a fake.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "unetback/control/frontend_keys.hpp"
#include "unetback/control/vif_status.hpp"
#include "unetback/datapath/fault.hpp"
#include "unetback/datapath/queue_config.hpp"
#include "unetback/datapath/vif_datapath.hpp"
#include "unetback/platform/frame_port.hpp"
#include "unetback/rings/ids.hpp"

namespace unetback::control {

/// The running data path of one vif.
class vif_queues {
 public:
  virtual ~vif_queues() = default;
  /// Maps rings, binds ports, starts the workers. Throws (std::system_error,
  /// std::runtime_error) leaving nothing running.
  virtual void start() = 0;
  /// Stops and joins every worker, unbinds, unmaps. Idempotent.
  virtual void stop() = 0;
  /// request-multicast-control changed at run time
  /// (feature-dynamic-multicast-control): filter multicast toward the guest.
  virtual void set_multicast_control(bool on) = 0;
  /// The backend's `rate` changed: the vif's TX credit, over all its queues
  /// (0 bytes: unlimited).
  virtual void set_rate(std::uint64_t bytes, std::chrono::microseconds interval) = 0;
  /// Control thread, after on_hash_published: saves the guest's latest hash
  /// configuration for the next daemon and reprograms RX steering to it.
  virtual void apply_hash() {}
  /// After stop(), when the vif is gone for good (not kept for the next
  /// daemon): forget what a restart would have carried over.
  virtual void discard_state() {}
  /// Every queue's counters and ring indices, in index order.
  [[nodiscard]] virtual std::vector<queue_status> queue_statuses() const = 0;
  /// `unetbackctl kick`: queue `q` (every queue when nullopt) notifies the
  /// guest and reads its rings again. Returns the queues asked. Throws
  /// std::invalid_argument for a queue the vif does not have.
  virtual std::vector<unsigned> kick(std::optional<unsigned> q) {
    (void)q;
    return {};
  }
  /// `unetbackctl hash`: the guest's hash configuration, if the frontend
  /// connected a control ring.
  [[nodiscard]] virtual std::optional<hash_status> hash_config() const { return std::nullopt; }
  /// The control ring's counters, if the frontend connected one.
  [[nodiscard]] virtual std::optional<datapath::ctrl_ring_counters> ctrl_counters() const {
    return std::nullopt;
  }
};

/// Builds the data path of a vif (not yet started).
class queue_factory {
 public:
  virtual ~queue_factory() = default;
  /// The callbacks in `config` may only post to the control thread (XSA-90);
  /// on_hash_published is answered with vif_queues::apply_hash() there.
  [[nodiscard]] virtual std::unique_ptr<vif_queues> create(
      datapath::vif_datapath_config config) = 0;
};

}  // namespace unetback::control
