#pragma once
// One simulated host for a hostile scenario, built from scratch and removed
// afterwards (like tests/integration/lib.sh): a temp dir, a "host" network
// namespace with a bridge, sim-xenstored, and the REAL unetbackd (sim
// platform, control socket) running in the host namespace. Guests are added
// by good_guest / hostile_guest. Needs root (namespaces, TAP).
//
// Binaries come from $UNETBACK_BIN (set by CMake for ctest).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "unetback/rings/ids.hpp"
#include "unetback/test_support/temp_dir.hpp"
#include "unetback/xs/client.hpp"

namespace unetback::hostile {

using namespace std::chrono_literals;

/// Polls `done` every `period` until it returns true or `timeout` passes.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds period = 20ms);

/// Timeouts of the tier: generous, the daemon runs under ASan on 2 shared cores.
inline constexpr std::chrono::milliseconds state_timeout = 20s;

struct world_options {
  std::vector<std::string> daemon_args;  ///< extra unetbackd flags
};

class world {
 public:
  /// Builds the world and starts sim-xenstored and unetbackd. Throws on failure.
  explicit world(const world_options& options = {});
  /// Stops everything (daemon first), removes namespaces and the temp dir.
  ~world();
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_.path(); }
  [[nodiscard]] std::filesystem::path xs_dir() const { return dir_.path() / "xenstore"; }
  [[nodiscard]] std::filesystem::path sim_dir() const { return dir_.path() / "sim"; }
  [[nodiscard]] std::filesystem::path logs() const { return dir_.path() / "logs"; }
  [[nodiscard]] std::filesystem::path bin(const std::string& name) const;
  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] const std::string& host_ns() const { return host_ns_; }
  [[nodiscard]] static constexpr const char* bridge() { return "ubr0"; }
  [[nodiscard]] static constexpr const char* host_ip() { return "198.18.0.1"; }

  /// dom0's XenStore connection (main thread only).
  [[nodiscard]] xs::client& xs() { return *xs_; }
  /// Reads a node as dom0.
  [[nodiscard]] std::optional<std::string> read(const std::string& path);
  /// Waits until `path` reads `value`.
  bool wait_value(const std::string& path, const std::string& value,
                  std::chrono::milliseconds timeout = state_timeout);

  /// /local/domain/0/backend/vif/<d>/0 and the error node of that vif.
  [[nodiscard]] static std::string backend_path(domid d);
  [[nodiscard]] static std::string error_node(domid d);
  [[nodiscard]] std::optional<int> backend_state(domid d);

  /// `sim-xl domain-create`: introduces domain `d` to sim-xenstored.
  void domain_create(domid d);
  /// `sim-xl network-attach d bridge=ubr0 mac=... [devid=N]` in the host
  /// namespace: writes the vif nodes, waits for InitWait, runs the hotplug script.
  void network_attach(domid d, const std::string& mac, unsigned devid = 0);

  // ---- the daemon under test
  [[nodiscard]] child_process& daemon() { return *daemon_; }
  /// True while unetbackd runs.
  [[nodiscard]] bool daemon_alive() { return daemon_->alive(); }
  /// VmRSS of unetbackd in KiB (0 if unreadable).
  [[nodiscard]] std::uint64_t daemon_rss_kib() const;
  /// The daemon's whole log so far.
  [[nodiscard]] std::string daemon_log() const;
  /// Waits until the daemon's log contains `needle`.
  bool wait_log(const std::string& needle, std::chrono::milliseconds timeout = state_timeout);
  /// Sanitizer reports (ASan/UBSan/LSan) in the daemon's log, empty if none.
  [[nodiscard]] std::string sanitizer_report() const;
  /// `unetbackctl COMMAND VIF --json`; null on failure.
  [[nodiscard]] nlohmann::json ctl_json(const std::string& command, const std::string& vif);
  /// `unetbackctl stats vif<d>.0 --json`; null on failure.
  [[nodiscard]] nlohmann::json stats(domid d);
  /// `unetbackctl stats VIF --json` (a domain's other vifs); null on failure.
  [[nodiscard]] nlohmann::json stats(const std::string& vif);
  /// `unetbackctl hash vif<d>.0 --json`; null on failure.
  [[nodiscard]] nlohmann::json hash(domid d);
  /// A counter of vif<d>.0 summed over its queues (queue_counters.hpp names).
  [[nodiscard]] std::uint64_t counter(domid d, const std::string& name);
  /// Stops the daemon with SIGTERM; its exit status (wait status).
  int stop_daemon();

  /// Runs `ip -n <host ns> ...`; returns the exit code.
  int ip_host(const std::vector<std::string>& args);
  /// A host-side interface's kernel statistics (`ip -s -j link`), or null.
  [[nodiscard]] nlohmann::json host_link_stats(const std::string& ifname);

 private:
  void create_host_ns();
  void start_xenstored();
  void start_daemon(const world_options& options);

  /// Short: sim_dir sockets must stay under 108 bytes.
  test_support::temp_dir dir_{"ubh."};
  std::string id_;
  std::string host_ns_;
  bool ns_created_ = false;
  std::unique_ptr<child_process> xenstored_;
  std::unique_ptr<child_process> daemon_;
  std::unique_ptr<xs::client> xs_;
};

/// Sums every numeric field called `name` found anywhere in `j`.
[[nodiscard]] std::uint64_t sum_field(const nlohmann::json& j, const std::string& name);

}  // namespace unetback::hostile
