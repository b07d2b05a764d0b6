#pragma once
// The supervisor: watches backend/vif under our own domain path (the domid is
// learned from XenStore, never assumed), enumerates <D>/<N> devices, creates
// a vif for each new device (online=1, state=1; at startup also adopts every
// online device, for a daemon restart) and forgets destroyed ones. Watch
// events only mean "re-read": they are coalesced per device and handled once
// per turn of the io_context. Per vif it watches the frontend's `state` node
// only (XSA-349); the backend nodes are covered by the backend/vif watch.

#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "unetback/control/vif.hpp"
#include "unetback/xs/client.hpp"
#include "unetback/xs/watcher.hpp"

namespace unetback::control {

/// Settings of every vif, with per-device overrides.
struct supervisor_options {
  vif_options defaults;
  /// Keyed by (frontend domid, devid): replaces `defaults` for that vif.
  std::map<std::pair<std::uint16_t, unsigned>, vif_options> per_vif;
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
  /// watches are removed. Idempotent.
  void shutdown();

  /// Our own domain id (valid after start()).
  [[nodiscard]] domid self() const { return self_; }
  /// Number of live vifs.
  [[nodiscard]] std::size_t vif_count() const { return vifs_.size(); }
  /// {"self": D, "vifs": [vif::describe()...]}: the per-vif, per-queue
  /// counters for unetbackctl.
  [[nodiscard]] nlohmann::json describe() const;

 private:
  using vif_key = std::pair<std::uint16_t, unsigned>;

  void on_watch(std::string_view path, std::string_view token);
  void mark_dirty(vif_key key);
  void schedule();
  void run_pending();
  void scan();
  void consider(domid d, unsigned devid);
  void refresh_vif(vif_key key);
  void forget(vif_key key);
  [[nodiscard]] static std::string frontend_token(vif_key key);

  boost::asio::any_io_executor executor_;
  xs::client& xs_;
  queue_factory& queues_;
  tap_factory& taps_;
  supervisor_options options_;
  domid self_{0};
  std::unique_ptr<vif_env> env_;
  std::unique_ptr<xs::watcher> watcher_;
  std::map<vif_key, std::shared_ptr<vif>> vifs_;
  std::set<vif_key> dirty_;
  bool scan_pending_ = false;
  bool scheduled_ = false;
  bool adopting_ = true;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace unetback::control
