#pragma once
// Settings layers: the TOML file (unetback.toml(5)) and the command line each
// produce a settings_layer of optional values; defaults <- file <- command
// line, then per-vif tables on top of the result.
//   [daemon]            platform, log-level, log-target, max-queues,
//                       wait-for-hotplug, max-xdp-headroom, poll-us,
//                       poll-budget-pct, poll-max-steal-pct, split-event-channels,
//                       direct-path, tx-batch, rx-batch, rx-backlog-bytes,
//                       rx-stall-timeout-ms, rx-drain-timeout-ms,
//                       fault-backoff-max-ms, sim-dir, xenstore, control-socket,
//                       metrics-listen, keep-vifs, user, seccomp
//   [vif."<D>.<N>"]     max-queues, wait-for-hotplug, poll-us, poll-budget-pct,
//                       poll-max-steal-pct, split-event-channels, direct-path,
//                       tx-batch, rx-batch, rx-backlog-bytes, rx-stall-timeout-ms,
//                       rx-drain-timeout-ms, fault-backoff-max-ms
// Unknown sections and keys are errors naming them.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "unetback/daemon/options.hpp"

namespace unetback::daemon::detail {

/// An inclusive range, shared by the file and the flags.
struct range {
  long long lo;
  long long hi;
};
inline constexpr range max_queues_range{1, 64};
inline constexpr range poll_us_range{0, 1'000'000};
inline constexpr range percent_range{0, 100};
inline constexpr range batch_range{1, 256};
inline constexpr range backlog_range{65'536, 1LL << 30};
inline constexpr range stall_ms_range{1'000, 3'600'000};
inline constexpr range xdp_headroom_range{0, 1024};
inline constexpr range backoff_ms_range{0, 600'000};

/// Per-vif settings that were given.
struct vif_overrides {
  std::optional<long long> max_queues;
  std::optional<bool> wait_for_hotplug;
  std::optional<long long> poll_us;
  std::optional<long long> poll_budget_pct;
  std::optional<long long> poll_max_steal_pct;
  std::optional<bool> split_event_channels;
  std::optional<bool> direct_path;
  std::optional<long long> tx_batch;
  std::optional<long long> rx_batch;
  std::optional<bool> notify_always;
  std::optional<long long> rx_backlog_bytes;
  std::optional<long long> rx_stall_timeout_ms;
  std::optional<long long> rx_drain_timeout_ms;
  std::optional<long long> fault_backoff_max_ms;
};

/// Daemon settings that were given (by the file or the command line).
struct settings_layer {
  std::optional<std::string> platform;
  std::optional<std::string> sim_dir;
  std::optional<std::string> xenstore;
  std::optional<std::string> control_socket;
  std::optional<boost::asio::ip::tcp::endpoint> metrics_listen;
  std::optional<std::string> state_dir;
  std::optional<spdlog::level::level_enum> log_level;
  std::optional<service::log_target> log_target;
  std::optional<long long> max_xdp_headroom;
  std::optional<bool> keep_vifs;
  std::optional<std::string> user;
  std::optional<service::syscall_filter_mode> seccomp;
  vif_overrides vif;
  std::map<control::vif_id, vif_overrides> per_vif;
};

/// poll-us as text: "auto" (datapath::queue_tuning::poll_us_auto), or
/// microseconds in poll_us_range. Throws
/// std::invalid_argument saying what is allowed.
[[nodiscard]] long long parse_poll_us(std::string_view text);

/// `user` as text: a user name as useradd(8) accepts it (a lower-case letter or
/// `_`, then up to 31 of `[a-z0-9_-]`). Whether it exists is checked at start
/// (service::lookup_account). Throws std::invalid_argument saying what is allowed.
[[nodiscard]] std::string parse_user_name(std::string_view text);

/// Reads the file. A missing file gives an empty layer when `optional_file`.
/// Throws std::invalid_argument naming the file and the key.
[[nodiscard]] settings_layer read_config_file(const std::string& path, bool optional_file);

/// `base` with every value `over` sets replaced.
[[nodiscard]] settings_layer merged(settings_layer base, const settings_layer& over);

/// `base` with the overrides applied.
[[nodiscard]] control::vif_options applied(control::vif_options base, const vif_overrides& o);

/// The options the layers describe (defaults for what neither sets).
[[nodiscard]] daemon_options resolve(const settings_layer& layer);

}  // namespace unetback::daemon::detail
