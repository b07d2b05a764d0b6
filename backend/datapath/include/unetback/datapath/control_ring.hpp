#pragma once
// The control-ring runner (feature-ctrl-ring, docs/protocol.md §4): one small
// thread per vif that maps the frontend's control ring, binds its event
// channel, answers requests with rings::ctrl_handler (grant reads are grant
// copies), and publishes the hash configuration into vif_shared_state.
// Started by the control plane after the queues when the frontend wrote
// ctrl-ring-ref / event-channel-ctrl; stopped before them.

#include <cstdint>
#include <memory>
#include <string>

#include "unetback/datapath/fault.hpp"
#include "unetback/datapath/queue.hpp"
#include "unetback/datapath/vif_shared_state.hpp"
#include "unetback/platform/platform.hpp"

namespace unetback::datapath {

/// What a guest did with its control ring, by answer (unetbackctl stats:
/// "ctrl"). Rejected requests (XSA-270 attempts) stay visible to the operator.
struct ctrl_ring_counters {
  std::uint64_t requests = 0;           ///< requests answered
  std::uint64_t not_supported = 0;      ///< XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED
  std::uint64_t invalid_parameter = 0;  ///< XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER
  std::uint64_t buffer_overflow = 0;    ///< XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW
  std::uint64_t events = 0;             ///< event-channel notifications received
  std::uint64_t event_storm_backoffs = 0;
};

class control_ring {
 public:
  /// Opens this runner's grant and event-channel handles from `platform`.
  /// `thread_name` (<= 15 chars) names the thread, e.g. "vif3.0-ctrl".
  control_ring(platform::platform& platform, domid frontend, grant_ref ring_ref, evtchn_port port,
               std::shared_ptr<vif_shared_state> shared, fault_handler on_fault,
               std::string thread_name = "unetback-ctrl");
  ~control_ring();  // stop()s
  control_ring(const control_ring&) = delete;
  control_ring& operator=(const control_ring&) = delete;

  /// Maps the ring, binds the port and starts the thread. Throws
  /// std::system_error (map/bind failure) or std::runtime_error (ring attach
  /// found req_prod - rsp_prod > RING_SIZE); nothing is left mapped or bound.
  void start();
  /// Stops and joins the thread, unbinds, unmaps. Idempotent.
  void stop();
  /// Before start(), after a daemon restart: takes over the hash
  /// configuration the guest set before (rings::ctrl_handler::restore) and
  /// publishes it. False if it is not one the guest could have set.
  [[nodiscard]] bool restore_hash(const rings::hash_config& config);

  /// Requests answered so far (any thread).
  [[nodiscard]] std::uint64_t requests_handled() const;
  /// Answers by status and event counts so far (any thread).
  [[nodiscard]] ctrl_ring_counters counters() const;
  /// Ring indices, like netback's debugfs ctrl ring dump.
  [[nodiscard]] std::string ring_dump() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace unetback::datapath
