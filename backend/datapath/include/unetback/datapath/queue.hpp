#pragma once
// One netif queue: a worker thread that owns its TX ring, RX ring, event
// channel(s), grant handle, TAP queue, buffers and counters. Nothing here is
// shared with other queues on the per-packet path.

#include <functional>
#include <memory>
#include <string>

#include "unetback/datapath/fault.hpp"
#include "unetback/datapath/queue_config.hpp"
#include "unetback/datapath/queue_counters.hpp"
#include "unetback/platform/frame_port.hpp"
#include "unetback/platform/platform.hpp"

namespace unetback::datapath {

class vif_shared_state;  // per-vif, read-mostly: multicast filter, hash config

class queue {
 public:
  /// Opens this queue's grant and event-channel handles from `platform`.
  /// `on_fault` is called from the worker thread when a sweep finds a fault
  /// (index overflow, too many slots, page-crossing slot, bad grant, TAP
  /// gone) or the worker throws; the worker has stopped touching the rings.
  queue(platform::platform& platform, queue_config config,
        std::unique_ptr<platform::frame_port> tap, std::shared_ptr<vif_shared_state> shared,
        fault_handler on_fault);
  ~queue();  // stop()s
  queue(const queue&) = delete;
  queue& operator=(const queue&) = delete;

  /// Maps both rings, binds the port(s) and starts the worker thread.
  /// Throws std::system_error (map/bind failure) or std::runtime_error
  /// (ring attach found req_prod - rsp_prod > RING_SIZE); nothing is left mapped.
  void start();
  /// Stops and joins the worker, unbinds ports, unmaps rings. Idempotent.
  void stop();

  /// `unetbackctl kick`: the worker notifies the guest on the queue's
  /// port(s) and reads both rings again (kicks counts it). Any thread;
  /// false when the worker is not running.
  bool kick();
  /// Counters, read with relaxed loads from any thread.
  [[nodiscard]] queue_counters_snapshot counters() const;
  /// Ring indices for `unetbackctl dump` (like netback's io_ring_qN): shared
  /// req_prod/req_event/rsp_prod/rsp_event and the worker's req_cons and
  /// rsp_prod_pvt. Call from the thread that starts and stops the queue.
  [[nodiscard]] std::string ring_dump() const;
  [[nodiscard]] const queue_config& config() const;
  /// Removes what a restart would carry over for this queue (its state
  /// file, queue_config::state_file): the vif is gone for good.
  static void discard_state(const queue_config& config);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace unetback::datapath
