#pragma once
// One netif queue of netfront-sim (Linux xen-netfront's netfront_queue): a TX
// ring and an RX ring in guest pages granted to the backend, one or two event
// channels, 256 TX slot pages and 256 RX buffers (each with its own claimed
// grant ref), bridged to one queue of the guest-side TAP by a worker thread:
//   TAP frame -> TX requests (tx_slots.hpp); TX responses end the grants;
//   RX responses -> reassembled frame (rx_assembler.hpp) -> TAP; buffers re-posted.
// The hostile mode (hostile_frontend.hpp) drives the same rings by hand.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "unetback/platform/frame_port.hpp"
#include "unetback/rings/netif.hpp"
#include "unetback/sim/netfront/frontend_keys.hpp"
#include "unetback/sim/netfront/frontend_memory.hpp"
#include "unetback/sim/netfront/guest_multicast.hpp"
#include "unetback/sim/netfront/rx_assembler.hpp"
#include "unetback/sim/netfront/tx_slots.hpp"

namespace unetback::sim {

/// Per-queue counters (relaxed atomics: read from any thread).
struct queue_counters {
  std::atomic<std::uint64_t> tx_packets{0};
  std::atomic<std::uint64_t> tx_bytes{0};
  std::atomic<std::uint64_t> tx_dropped{0};          ///< frames we could not plan (tx_plan_error)
  std::atomic<std::uint64_t> tx_error_responses{0};  ///< backend answered ERROR/DROPPED
  std::atomic<std::uint64_t> rx_packets{0};
  std::atomic<std::uint64_t> rx_bytes{0};
  std::atomic<std::uint64_t> rx_errors{0};     ///< malformed response chains (rx_error)
  std::atomic<std::uint64_t> rx_dropped{0};    ///< bad offload metadata or TAP full
  std::atomic<std::uint64_t> grants_busy{0};   ///< end_access found a grant still mapped
  std::atomic<std::uint64_t> events{0};        ///< event-channel wake-ups
  std::atomic<std::uint64_t> tx_max_slots{0};  ///< most data slots one packet took
  /// RX frames with a blank checksum although we sent feature-no-csum-offload (dropped)
  std::atomic<std::uint64_t> rx_partial_csum{0};
  std::atomic<std::uint64_t> mcast_sent{0};    ///< multicast add/del requests
  std::atomic<std::uint64_t> mcast_errors{0};  ///< ...the backend answered not OKAY
};

/// One change to the backend's multicast filter list.
struct multicast_change {
  bool add = true;  ///< XEN_NETIF_EXTRA_TYPE_MCAST_ADD, else _DEL
  mac_bytes mac{};
};

/// Static description of a queue.
struct queue_setup {
  queue_index index;
  domid backend_id;
  bool split_event_channels = false;
  backend_features backend;
  frontend_request request;
};

class frontend_queue {
 public:
  static constexpr std::uint32_t tx_ids = rings::tx_front_ring::size;
  static constexpr std::uint32_t rx_ids = rings::rx_front_ring::size;

  /// Allocates and grants the rings, buffers and ports. Throws on exhaustion.
  frontend_queue(frontend_memory& memory, const queue_setup& setup);
  /// Stops the worker and releases every grant, page and port.
  ~frontend_queue();
  frontend_queue(const frontend_queue&) = delete;
  frontend_queue& operator=(const frontend_queue&) = delete;

  /// The keys this queue contributes to the handshake.
  [[nodiscard]] queue_keys keys() const;
  /// Posts RX buffers until the RX ring is full, kicking if the backend asked.
  void fill_rx_ring();
  /// Starts the worker, bridging the rings to `tap` (a guest TAP queue).
  void start(platform::frame_port& tap);
  /// Stops and joins the worker. Idempotent.
  void stop();
  /// Queues `change` for the worker, which sends it as Windows XenVif does: a
  /// TX request of size 0 flagged NETTXF_extra_info, then the MCAST extra.
  /// Any thread.
  void post_multicast(const multicast_change& change);
  /// True when the worker stopped on a backend protocol violation.
  [[nodiscard]] bool faulted() const { return faulted_.load(); }

  [[nodiscard]] const queue_counters& counters() const { return counters_; }
  [[nodiscard]] const queue_setup& setup() const { return setup_; }

  /// Raw access for hostile_frontend (only while the worker is stopped).
  rings::tx_front_ring& tx_ring() { return tx_; }
  rings::rx_front_ring& rx_ring() { return rx_; }
  frontend_events& events() { return *ev_; }
  [[nodiscard]] const shared_page& tx_ring_page() const { return tx_ring_page_; }
  [[nodiscard]] const shared_page& rx_ring_page() const { return rx_ring_page_; }
  [[nodiscard]] evtchn_port tx_port() const { return tx_port_; }
  [[nodiscard]] evtchn_port rx_port() const { return rx_port_; }
  [[nodiscard]] const shared_page& tx_slot(std::uint16_t id) const { return tx_slots_.at(id); }

 private:
  void run(platform::frame_port& tap);
  void wait_for_work(platform::frame_port& tap, bool tx_room);
  bool tx_has_room() const;
  void transmit_from_tap(platform::frame_port& tap);
  bool transmit(std::span<std::byte> frame, const rings::vnet_header& vnet);
  bool send_multicast_changes();
  void count_tx_slots(std::uint32_t slots);
  void process_tx_responses();
  /// One TX response (not an extra's): frees its id and slot. False for an
  /// id that is not in flight.
  bool complete_tx(const rings::tx_response& rsp);
  void process_rx_responses(platform::frame_port& tap);
  void deliver(platform::frame_port& tap);
  void release_rx_slots();
  void fault(const char* what);

  frontend_memory& memory_;
  queue_setup setup_;
  std::unique_ptr<frontend_events> ev_;
  shared_page tx_ring_page_;
  shared_page rx_ring_page_;
  evtchn_port tx_port_;
  evtchn_port rx_port_;
  rings::tx_front_ring tx_;
  rings::rx_front_ring rx_;
  std::vector<shared_page> tx_slots_, rx_slots_;  // slot buffers, by request id
  std::vector<std::uint16_t> tx_free_ids_;
  std::vector<bool> tx_in_flight_;
  std::vector<bool> tx_control_;  // ids in flight for a multicast change (no grant)
  std::mutex mcast_mutex_;
  std::vector<multicast_change> mcast_pending_;  // guarded by mcast_mutex_
  std::atomic<bool> mcast_posted_{false};
  rx_assembler assembler_;
  std::vector<std::uint32_t> rx_consumed_;  // ring indices of the packet being assembled
  std::vector<std::byte> frame_buf_;
  queue_counters counters_;
  int stop_fd_ = -1;
  int wake_fd_ = -1;  // post_multicast's nudge
  std::atomic<bool> faulted_{false};
  std::thread worker_;
};

}  // namespace unetback::sim
