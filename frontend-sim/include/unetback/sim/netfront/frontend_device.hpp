#pragma once
// One vif of netfront-sim: the frontend side of the xenbus handshake (Linux
// xen-netfront, docs/protocol.md §1.5) over the guest's XenStore connection,
// driving its frontend_queues and optional control ring.
//
//   our state   backend state  action
//   1 Init      2 InitWait     require feature-rx-copy; negotiate queues; grant
//                              rings, alloc ports; write keys (one transaction);
//                              fill RX rings; state 4
//   4           4 Connected    open the guest TAP (first time), start workers,
//                              send the Toeplitz config over the control ring
//   any active  5/6            state 5, stop workers, release grants/ports, 6;
//                              with reconnect: state 1 and wait for InitWait again
// The caller watches backend_state_path() and calls on_backend_changed().

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "unetback/platform/frame_port.hpp"
#include "unetback/sim/netfront/ctrl_channel.hpp"
#include "unetback/sim/netfront/frontend_keys.hpp"
#include "unetback/sim/netfront/frontend_memory.hpp"
#include "unetback/sim/netfront/frontend_queue.hpp"
#include "unetback/xs/client.hpp"

namespace unetback::sim {

/// XenbusState values (xen/io/xenbus.h).
enum class xenbus_state : int {
  unknown = 0,
  initialising = 1,
  init_wait = 2,
  initialised = 3,
  connected = 4,
  closing = 5,
  closed = 6,
  reconfiguring = 7,
  reconfigured = 8,
};

struct device_options {
  domid self;
  std::uint32_t devid = 0;
  frontend_request request;
  bool reconnect = false;
  /// The Toeplitz mapping sent over the control ring (entry i -> queue);
  /// empty: 128 entries, entry i = i mod queues.
  std::vector<std::uint32_t> hash_mapping;
  /// Hostile: keys (relative to the frontend dir) written over the handshake's
  /// own in the same transaction, e.g. {"multi-queue-num-queues", "999"}.
  std::vector<std::pair<std::string, std::string>> key_overrides;
};

/// Opens the guest TAP once the queue count and backend features are known.
using tap_opener = std::function<std::vector<std::unique_ptr<platform::frame_port>>(
    std::uint32_t queues, const backend_features& be, const std::optional<std::string>& mac)>;

class frontend_device {
 public:
  /// What on_backend_changed() concluded.
  enum class outcome : std::uint8_t {
    waiting,    ///< handshake in progress or connected: keep running
    connected,  ///< just became Connected
    closed,     ///< the backend closed the device and we will not reconnect
    failed,     ///< the handshake was refused (see last_error())
  };

  /// Reads the frontend dir (backend, backend-id). Throws on missing keys.
  frontend_device(frontend_memory& memory, xs::client& xs, device_options options, tap_opener taps);
  ~frontend_device();
  frontend_device(const frontend_device&) = delete;
  frontend_device& operator=(const frontend_device&) = delete;

  [[nodiscard]] const std::string& frontend_path() const { return fe_path_; }
  [[nodiscard]] const std::string& backend_path() const { return be_path_; }
  [[nodiscard]] std::string backend_state_path() const { return be_path_ + "/state"; }
  [[nodiscard]] domid backend_id() const { return be_id_; }

  /// Re-reads the backend state and advances the handshake.
  outcome on_backend_changed();
  /// Orderly close: state 5, stop, release, state 6. Idempotent.
  void close();

  [[nodiscard]] bool connected() const { return connected_; }
  [[nodiscard]] bool faulted() const;
  [[nodiscard]] const std::string& last_error() const { return error_; }
  [[nodiscard]] std::optional<bool> ctrl_config_ok() const { return ctrl_ok_; }
  [[nodiscard]] std::vector<std::unique_ptr<frontend_queue>>& queues() { return queues_; }
  /// Counters of queues already torn down (earlier connections), summed per index.
  [[nodiscard]] const std::vector<queue_counters>& retired_counters() const { return retired_; }
  [[nodiscard]] xs::client& xenstore() { return xs_; }
  [[nodiscard]] frontend_memory& memory() { return memory_; }

  /// Writes our frontend `state` node.
  void write_state(xenbus_state s);

  /// Brings the backend's multicast filter list to `macs`: queue 0 sends an
  /// add or a delete for each difference from what this connection sent.
  /// Nothing unless connected with multicast control requested and offered.
  void sync_multicast_list(const std::vector<mac_bytes>& macs);
  /// Writes request-multicast-control (the backend offers
  /// feature-dynamic-multicast-control): Windows XenVif turns it off for
  /// all-multicast and on again without re-sending its list.
  void set_multicast_control(bool on);

 private:
  [[nodiscard]] std::optional<xenbus_state> read_backend_state();
  outcome start_handshake();
  void write_keys(const backend_features& be);
  outcome on_connected();
  void teardown();

  frontend_memory& memory_;
  xs::client& xs_;
  device_options options_;
  tap_opener open_taps_;
  std::string fe_path_;
  std::string be_path_;
  domid be_id_;
  xenbus_state state_ = xenbus_state::initialising;
  bool connected_ = false;
  backend_features be_features_;
  std::vector<std::unique_ptr<frontend_queue>> queues_;
  std::unique_ptr<ctrl_channel> ctrl_;
  std::vector<std::unique_ptr<platform::frame_port>> taps_;
  std::vector<queue_counters> retired_;
  std::optional<bool> ctrl_ok_;
  std::vector<mac_bytes> mcast_sent_;  // the backend's list, as we sent it
  std::string error_;
};

}  // namespace unetback::sim
