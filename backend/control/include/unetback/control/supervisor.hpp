#pragma once
// The supervisor: watches backend/vif under our own domain path (the domid is
// learned from XenStore, never assumed), enumerates <D>/<N> devices, creates
// a vif for each new device (online=1, state=1; at startup also adopts every
// online device, for a daemon restart) and forgets destroyed ones. Watch
// events only mean "re-read": they are coalesced per device and handled once
// per turn of the io_context. Per vif it watches the frontend's `state` node
// only (XSA-349); the backend nodes are covered by the backend/vif watch.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "unetback/control/vif.hpp"
#include "unetback/control/vif_status.hpp"
#include "unetback/xs/client.hpp"
#include "unetback/xs/watcher.hpp"

namespace unetback::control {

/// Settings of every vif, with per-device overrides.
struct supervisor_options {
  vif_options defaults;
  /// Replaces `defaults` for that vif.
  std::map<vif_id, vif_options> per_vif;
};

/// What daemon exit does to the vifs (supervisor::shutdown).
enum class vif_exit : std::uint8_t {
  close,  ///< every data path stops and every backend goes Closed
  keep,   ///< keep-vifs (upgrades): only the data paths stop; the next daemon resumes
};

class supervisor {
 public:
  /// Everything stays idle until start().
  supervisor(boost::asio::any_io_executor executor, xs::client& xs, queue_factory& queues,
             tap_factory& taps, supervisor_options options);
  ~supervisor();
  supervisor(const supervisor&) = delete;
  supervisor& operator=(const supervisor&) = delete;

  /// Learns our domid, watches backend/vif and adopts existing devices.
  /// Throws xs::error if XenStore is unusable.
  void start();
  /// Daemon exit: every vif's data path stops and its backend goes Closed;
  /// watches are removed. Idempotent. With vif_exit::keep (keep-vifs, for
  /// upgrades) only the data paths stop: states, TAPs and carriers stay, and
  /// the next daemon resumes every Connected vif (vif::adopt()).
  void shutdown(vif_exit exit = vif_exit::close);
  /// `unetbackctl disable vif<D>.<N>`: that vif's data path stops, its state
  /// stays. Throws std::invalid_argument for an unknown vif.
  void disable(vif_id id, const std::string& reason);
  /// `unetbackctl enable vif<D>.<N>`: resumes a disabled (or faulted) vif.
  /// Returns false when it was not disabled. Throws std::invalid_argument
  /// for an unknown vif.
  bool enable(vif_id id);

  /// `unetbackctl kick vif<D>.<N> [queue]` (vif::kick). Throws
  /// std::invalid_argument for an unknown vif or queue.
  std::vector<unsigned> kick(vif_id id, std::optional<unsigned> q);
  /// `unetbackctl hash vif<D>.<N>` (vif::hash_config). Throws
  /// std::invalid_argument for an unknown vif.
  [[nodiscard]] std::optional<hash_status> hash_config(vif_id id) const;
  /// A link message from the host (the daemon's rtnetlink watch): handed to
  /// the vif whose TAP it names (vif::note_link).
  void note_link(const tap::link_event& e);

  /// Our own domain id (valid after start()).
  [[nodiscard]] domid self() const { return self_; }
  /// Number of live vifs.
  [[nodiscard]] std::size_t vif_count() const { return vifs_.size(); }
  /// Every vif's status, for unetbackctl and the metrics; `adopted` counts
  /// the devices this daemon took over at start-up (a restart or upgrade
  /// resuming them).
  [[nodiscard]] daemon_status status() const;

 private:
  /// The token of the watch on the backend root.
  static constexpr std::string_view backend_token = "backend-vif";

  void on_watch(std::string_view path, std::string_view token);
  void mark_dirty(vif_id key);
  void schedule();
  void run_pending();
  void scan();
  void consider(vif_id key);
  void refresh_vif(vif_id key);
  void forget(vif_id key);
  [[nodiscard]] std::shared_ptr<vif> find(vif_id id) const;
  [[nodiscard]] static std::string frontend_token(vif_id key);
  // XenStore connection loss (supervisor_reconnect.cpp): a probe every
  // second; on loss the watcher goes, reconnects back off from 100 ms to 5 s,
  // then every watch is re-established and every vif re-read (vifs whose
  // backend directory is gone are released).
  void start_liveness_probe();
  void arm_xs_timer(std::chrono::milliseconds delay);
  void on_xs_timer();
  [[nodiscard]] bool direct_path_wanted() const;
  void on_xenstore_lost();
  bool try_reconnect();
  void rewatch();

  boost::asio::any_io_executor executor_;
  xs::client& xs_;
  queue_factory& queues_;
  tap_factory& taps_;
  supervisor_options options_;
  domid self_{0};
  std::unique_ptr<direct_path> direct_;  ///< when a vif may use the direct path; outlives the vifs
  std::unique_ptr<vif_env> env_;
  std::unique_ptr<xs::watcher> watcher_;
  std::map<vif_id, std::shared_ptr<vif>> vifs_;
  std::set<vif_id> dirty_;
  bool scan_pending_ = false;
  bool scheduled_ = false;
  bool adopting_ = true;
  std::uint64_t adopted_ = 0;  ///< devices adopted at start-up
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<boost::asio::steady_timer> xs_timer_;
  std::chrono::milliseconds reconnect_delay_{0};  ///< 0: connected
  unsigned reconnect_attempts_ = 0;
};

}  // namespace unetback::control
