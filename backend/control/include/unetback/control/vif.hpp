#pragma once
// One vif: backend/vif/<D>/<N> under our domain path. It validates the backend
// keys, then follows next_step() (state_machine.hpp) on every refresh: it
// creates the TAP before InitWait, advertises features, connects the data
// path when the frontend is Connected, publishes Connected once the hotplug
// script reported "connected", tears down on Closing/Closed/unplug, and
// destroys the TAP only when the device is really gone. Connect-time protocol
// violations and data-path faults write
// /local/domain/<self>/error/backend/vif/<D>/<N>/error and close this vif
// only. Runs on the control thread (the io_context); never blocks on guests.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "unetback/control/backend_keys.hpp"
#include "unetback/control/direct_path.hpp"
#include "unetback/control/fault_backoff.hpp"
#include "unetback/control/paced_call.hpp"
#include "unetback/control/queue_factory.hpp"
#include "unetback/control/state_machine.hpp"
#include "unetback/control/tap_factory.hpp"
#include "unetback/control/vif_connection.hpp"
#include "unetback/control/vif_id.hpp"
#include "unetback/control/vif_status.hpp"
#include "unetback/control/wakeup_timer.hpp"
#include "unetback/datapath/fault.hpp"
#include "unetback/datapath/queue_config.hpp"
#include "unetback/rings/ids.hpp"
#include "unetback/tap/link_events.hpp"
#include "unetback/util/log_limits.hpp"
#include "unetback/xs/client.hpp"

namespace unetback::control {

/// Daemon-wide settings every vif uses.
struct vif_options {
  unsigned max_queues = 8;               ///< multi-queue-max-queues we advertise (1..64)
  bool wait_for_hotplug = true;          ///< false: Connected without hotplug-status; we bridge
  std::uint32_t max_xdp_headroom = 512;  ///< upper bound for the frontend's xdp-headroom
  /// Offer feature-split-event-channels (netif.h: separate TX and RX event
  /// channels per queue); false: the frontend uses one channel per queue.
  bool split_event_channels = true;
  datapath::queue_tuning tuning;  ///< per-queue defaults (rate comes from `rate`)
  /// The most a frontend that keeps faulting waits before it may connect
  /// again (fault_backoff.hpp; 0: no wait).
  std::chrono::milliseconds fault_backoff_max{10'000};
  /// Offer this vif's guest-to-guest frames the direct path (docs/direct-path.md):
  /// its queues' frame ports become direct ports, and it is paired with other
  /// such vifs where no host policy could see the difference. Off by default.
  bool direct_path = false;
};

/// What the supervisor shares with its vifs.
struct vif_env {
  boost::asio::any_io_executor executor;  ///< the control thread
  xs::client& xs;
  queue_factory& queues;
  tap_factory& taps;
  domid self;                ///< our own domain id
  std::string backend_root;  ///< /local/domain/<self>/backend/vif
  std::string error_root;    ///< /local/domain/<self>/error/backend/vif
  /// Asks for refresh() of a vif soon, coalesced (used after faults).
  std::function<void(vif_id)> request_refresh;
  /// The direct path's control plane; nullptr when no vif may use it.
  direct_path* direct = nullptr;
};

class vif : public std::enable_shared_from_this<vif> {
 public:
  /// Reads and validates the backend keys; creates nothing yet.
  vif(vif_env& env, vif_options options, vif_id id);
  /// Stops a running data path (no XenStore writes: see shutdown()).
  ~vif();
  vif(const vif&) = delete;
  vif& operator=(const vif&) = delete;

  /// backend/vif/<D>/<N> as an absolute path.
  [[nodiscard]] const std::string& backend_path() const { return backend_path_; }
  /// The frontend nodes to watch: `state` and `request-multicast-control`
  /// (feature-dynamic-multicast-control), never the whole frontend directory
  /// (XSA-349). Empty when the backend keys were invalid.
  [[nodiscard]] std::vector<std::string> frontend_watch_paths() const;
  /// Taking over a device found at startup in a later state (daemon
  /// restart): re-attaches the persistent TAP now, so that destroying the
  /// device later also removes the interface, and makes the next connect a
  /// resume (datapath::queue_config::resume): a Connected device is served
  /// again from the rings the frontend still holds, never leaving Connected.
  void adopt();
  /// `unetbackctl disable`: stops the data path (workers joined, ports
  /// unbound, rings unmapped), carrier off; the xenbus state is kept (as
  /// Linux netback's carrier-off `disabled` vif). Idempotent.
  void disable(const std::string& reason);
  /// `unetbackctl enable`: resumes the data path like a restart does (fresh
  /// map and bind, indices from the shared rings). Also clears a frontend
  /// fault (logged as a warning). Returns false when there was nothing to enable.
  bool enable();
  /// `unetbackctl kick`: see vif_queues::kick. Throws std::invalid_argument
  /// when the data path is not running or the queue does not exist.
  std::vector<unsigned> kick(std::optional<unsigned> q);
  /// `unetbackctl hash`: the guest's hash configuration, null without a
  /// running control ring.
  [[nodiscard]] std::optional<hash_status> hash_config() const;
  /// Re-reads XenStore and applies next_step() until nothing is left to do
  /// (bounded). Errors of this vif never escape.
  void refresh();
  /// A data-path fault reported for connection `generation`: disables the
  /// vif (error node, carrier off) and requests a refresh, which stops the
  /// queues and goes Closing. Stale generations are ignored.
  void on_fault(std::uint64_t generation, const datapath::fault& f);
  /// Control thread: the data path of connection `generation` published a
  /// new hash configuration; it is saved and steered to at most ten times
  /// per second (paced_call), the latest one always.
  void on_hash_published(std::uint64_t generation);
  /// A link message about an interface: if it is this vif's TAP, logs its
  /// bridge changes (joined, left: the guest is cut off from the host
  /// network) and its deletion. The data path is not touched (a deleted TAP
  /// is reported by the workers).
  void note_link(const tap::link_event& e);
  /// Daemon exit: stop the data path and walk the backend to Closed.
  void shutdown();
  /// Daemon exit keeping the vif (keep-vifs): stop the data path and leave
  /// XenStore, the TAP and its carrier alone, so the next daemon resumes.
  void detach();
  /// True once destroyed: the supervisor forgets it.
  [[nodiscard]] bool destroyed() const {
    return std::holds_alternative<connection_destroyed>(connection_);
  }
  /// What the vif is doing, what stopped it, what its queues counted.
  [[nodiscard]] vif_status status() const;

 private:
  [[nodiscard]] vif_snapshot read_snapshot();
  bool apply(vif_action a, const vif_snapshot& s);
  bool do_create_tap();
  bool do_advertise_features();
  bool do_connect();
  [[nodiscard]] frontend_limits limits() const;
  void start_data_path(frontend_config cfg);
  /// Wraps each TAP queue in a direct port if this vif offers the direct path.
  std::vector<direct::direct_port*> wrap_direct_ports(
      std::vector<std::unique_ptr<platform::frame_port>>& taps) const;
  void offer_direct_path(const datapath::frontend_features& features,
                         std::vector<direct::direct_port*> ports);
  /// The running connection's queues, null while stopped or destroyed.
  [[nodiscard]] vif_queues* queues() const;
  /// Whether the next connect resumes the rings (kept only while stopped).
  void set_resume_next(bool resume);
  [[nodiscard]] bool resume_next() const;
  /// The running connection is the one of `generation` (not a stale report).
  [[nodiscard]] bool is_current(std::uint64_t generation) const;
  /// Stops the workers, after taking the vif off the direct path; returns the
  /// direct counters as they were then.
  std::optional<direct_status> stop_data_path(connection_running& running);
  /// Without feature-sg a frame must fit one RX slot: the TAP's MTU goes down
  /// to 1500 (Linux xenvif_carrier_on).
  void clamp_mtu_without_sg(const datapath::frontend_features& features);
  void bridge_tap(bool adopted);
  /// Without hotplug: bridge the TAP and bring it up (fails the vif if not).
  bool bring_tap_up(bool resuming);
  void do_disconnect();
  void do_destroy(const vif_snapshot& s);
  void follow_multicast_control();
  /// `rate` is watched, as Linux does: a change applies to the running vif.
  void follow_rate();
  /// A `rate` that does not parse means unlimited: said once per value.
  void warn_if_rate_ignored() const;
  bool write_state(xenbus_state st);
  /// The frontend re-initialised after a failure: clears it once the fault
  /// backoff has passed, else asks for a refresh at that time.
  void grant_fresh_attempt();
  /// Stops this vif on a fault of `kind`'s making (xenbus_dev_fatal).
  void fail(datapath::fault_kind kind, const std::string& message);
  [[nodiscard]] std::string tag() const;
  /// The TAP's current name, "" without one, "(deleted)" once it is gone.
  [[nodiscard]] std::string tap_name() const;

  vif_env& env_;
  vif_options options_;
  vif_id id_;
  /// Lines this vif's guest can trigger, here and in its data path: limited
  /// per vif, so one guest's flood leaves other vifs' lines visible.
  std::shared_ptr<util::log_limits> log_limits_ = std::make_shared<util::log_limits>();
  std::string backend_path_;
  std::optional<backend_config> config_;
  std::unique_ptr<vif_tap> tap_;
  vif_connection connection_;
  std::uint64_t connections_ = 0;  ///< generations handed out so far
  xenbus_state last_frontend_ = xenbus_state::unknown;
  xenbus_state backend_state_ = xenbus_state::unknown;
  std::optional<std::string> disabled_reason_;  ///< set by disable()
  std::optional<failure_hold> failure_;
  fault_backoff backoff_;
  wakeup_timer retry_;  ///< refreshes when the backoff has passed
  bool bridged_ = false;
  int tap_master_ = 0;           ///< the TAP's bridge (ifindex) per link messages
  std::string tap_master_name_;  ///< its name, for when it is gone
  paced_call hash_apply_;        ///< vif_queues::apply_hash, paced
};

}  // namespace unetback::control
