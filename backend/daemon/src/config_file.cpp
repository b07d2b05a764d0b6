#include "config_file.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "unetback/metrics/listen_address.hpp"
#include "unetback/rings/ids.hpp"
#include "unetback/service/logging.hpp"
#include "unetback/xs/permission.hpp"

namespace unetback::daemon::detail {

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

long long integer(const toml::node& n, const std::string& where, range r) {
  const auto v = n.value<long long>();
  if (!n.is_integer() || !v || *v < r.lo || *v > r.hi) {
    bad(where, "must be an integer in " + std::to_string(r.lo) + ".." + std::to_string(r.hi));
  }
  return *v;
}

long long poll_us_text(const toml::node& n, const std::string& where) {
  try {
    return parse_poll_us(*n.value<std::string>());
  } catch (const std::invalid_argument& e) {
    bad(where, e.what());
  }
}

bool boolean(const toml::node& n, const std::string& where) {
  if (!n.is_boolean()) {
    bad(where, "must be true or false");
  }
  return *n.value<bool>();
}

std::string string(const toml::node& n, const std::string& where) {
  if (!n.is_string()) {
    bad(where, "must be a string");
  }
  return *n.value<std::string>();
}

// Keys valid both in [daemon] and [vif."D.N"]: `o` with `key` set, or
// nullopt if `key` is not one of them.
std::optional<vif_overrides> with_vif_key(vif_overrides o, const std::string& key,
                                          const toml::node& n, const std::string& where) {
  if (key == "max-queues") {
    o.max_queues = integer(n, where, max_queues_range);
  } else if (key == "wait-for-hotplug") {
    o.wait_for_hotplug = boolean(n, where);
  } else if (key == "poll-us") {
    o.poll_us = n.is_string() ? poll_us_text(n, where) : integer(n, where, poll_us_range);
  } else if (key == "poll-budget-pct") {
    o.poll_budget_pct = integer(n, where, percent_range);
  } else if (key == "poll-max-steal-pct") {
    o.poll_max_steal_pct = integer(n, where, percent_range);
  } else if (key == "split-event-channels") {
    o.split_event_channels = boolean(n, where);
  } else if (key == "direct-path") {
    o.direct_path = boolean(n, where);
  } else if (key == "tx-batch") {
    o.tx_batch = integer(n, where, batch_range);
  } else if (key == "rx-batch") {
    o.rx_batch = integer(n, where, batch_range);
  } else if (key == "notify-always") {
    o.notify_always = boolean(n, where);
  } else if (key == "rx-backlog-bytes") {
    o.rx_backlog_bytes = integer(n, where, backlog_range);
  } else if (key == "rx-stall-timeout-ms") {
    o.rx_stall_timeout_ms = integer(n, where, stall_ms_range);
  } else if (key == "rx-drain-timeout-ms") {
    o.rx_drain_timeout_ms = integer(n, where, stall_ms_range);
  } else if (key == "fault-backoff-max-ms") {
    o.fault_backoff_max_ms = integer(n, where, backoff_ms_range);
  } else {
    return std::nullopt;
  }
  return o;
}

// A string naming one of `allowed` (a wrong type also lists them).
std::string choice(const toml::node& n, const std::string& where, std::string_view allowed) {
  if (!n.is_string()) {
    bad(where, "must be a string, one of " + std::string(allowed));
  }
  return *n.value<std::string>();
}

std::string one_of(const toml::node& n, const std::string& where,
                   std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    list += list.empty() ? a : std::string(", ") + a;
  }
  std::string v = choice(n, where, list);
  for (const char* a : allowed) {
    if (v == a) {
      return v;
    }
  }
  bad(where, "must be one of " + list);
}

// A file-system path: a non-empty absolute path.
std::string path(const toml::node& n, const std::string& where) {
  std::string v = string(n, where);
  if (v.empty() || v.front() != '/') {
    bad(where, "must be an absolute path");
  }
  return v;
}

std::string user_name(const toml::node& n, const std::string& where) {
  try {
    return parse_user_name(string(n, where));
  } catch (const std::invalid_argument& e) {
    bad(where, e.what());
  }
}

// One [daemon] key into `s` (a copy, returned).
settings_layer with_daemon_key(settings_layer s, const std::string& key, const toml::node& n,
                               const std::string& where) {
  if (auto o = with_vif_key(s.vif, key, n, where)) {
    s.vif = *o;
  } else if (key == "platform") {
    s.platform = one_of(n, where, {"xen", "sim"});
  } else if (key == "log-level") {
    s.log_level = service::parse_log_level(choice(n, where, service::log_level_names));
  } else if (key == "log-target") {
    s.log_target = service::parse_log_target(choice(n, where, service::log_target_names));
  } else if (key == "max-xdp-headroom") {
    s.max_xdp_headroom = integer(n, where, xdp_headroom_range);
  } else if (key == "sim-dir") {
    s.sim_dir = path(n, where);
  } else if (key == "xenstore") {
    s.xenstore = path(n, where);
  } else if (key == "control-socket") {
    s.control_socket = path(n, where);
  } else if (key == "metrics-listen") {
    s.metrics_listen = metrics::parse_listen_address(string(n, where));
  } else if (key == "state-dir") {
    s.state_dir = path(n, where);
  } else if (key == "keep-vifs") {
    s.keep_vifs = boolean(n, where);
  } else if (key == "user") {
    s.user = user_name(n, where);
  } else if (key == "seccomp") {
    s.seccomp = service::parse_syscall_filter_mode(one_of(n, where, {"off", "log", "kill"}));
  } else {
    bad(where, "unknown key");
  }
  return s;
}

settings_layer daemon_table(const toml::table& t, const std::string& file) {
  settings_layer s;
  for (const auto& [k, n] : t) {
    const std::string key(k.str());
    const std::string where = file + ": [daemon] " + key;
    try {
      s = with_daemon_key(std::move(s), key, n, where);
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      throw std::invalid_argument(msg.starts_with(file) ? msg : where + ": " + msg);
    }
  }
  return s;
}

control::vif_id vif_named(const std::string& name, const std::string& file) {
  const auto dot = name.find('.');
  const auto d =
      dot == std::string::npos ? std::nullopt : xs::parse_decimal(name.substr(0, dot), domid_max);
  const auto n =
      dot == std::string::npos ? std::nullopt : xs::parse_decimal(name.substr(dot + 1), 65535);
  if (!d || !n) {
    bad(file + ": [vif.\"" + name + "\"]", "the name must be \"<domid>.<devid>\"");
  }
  return {domid{static_cast<std::uint16_t>(*d)}, static_cast<unsigned>(*n)};
}

std::map<control::vif_id, vif_overrides> vif_tables(const toml::table& t, const std::string& file) {
  std::map<control::vif_id, vif_overrides> per_vif;
  for (const auto& [k, n] : t) {
    const std::string name(k.str());
    const auto* table = n.as_table();
    if (table == nullptr) {
      bad(file + ": vif." + name, "must be a table [vif.\"<domid>.<devid>\"]");
    }
    vif_overrides o;
    for (const auto& [vk, vn] : *table) {
      const std::string key(vk.str());
      const std::string where = file + ": [vif.\"" + name + "\"] " + key;
      auto next = with_vif_key(o, key, vn, where);
      if (!next) {
        bad(where, "unknown key");
      }
      o = *next;
    }
    per_vif[vif_named(name, file)] = o;
  }
  return per_vif;
}

}  // namespace

long long parse_poll_us(std::string_view text) {
  if (text == "auto") {
    return datapath::queue_tuning::poll_us_auto;
  }
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < poll_us_range.lo ||
      v > poll_us_range.hi) {
    throw std::invalid_argument("must be auto or an integer in " +
                                std::to_string(poll_us_range.lo) + ".." +
                                std::to_string(poll_us_range.hi));
  }
  return v;
}

std::string parse_user_name(std::string_view text) {
  const auto is_first = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  const auto is_next = [&](char c) { return is_first(c) || (c >= '0' && c <= '9') || c == '-'; };
  if (text.empty() || text.size() > 32 || !is_first(text.front()) ||
      !std::all_of(text.begin() + 1, text.end(), is_next)) {
    throw std::invalid_argument("must be a user name: a-z or _, then up to 31 of a-z 0-9 _ -");
  }
  return std::string(text);
}

settings_layer read_config_file(const std::string& path, bool optional_file) {
  settings_layer s;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    if (optional_file) {
      return s;
    }
    throw std::invalid_argument(path + ": no such configuration file");
  }
  if (ec) {
    throw std::invalid_argument(path + ": " + ec.message());
  }
  if (status.type() != std::filesystem::file_type::regular) {
    throw std::invalid_argument(path + ": not a regular file");
  }
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << path << ":" << e.source().begin.line << ":" << e.source().begin.column << ": "
        << e.description();
    throw std::invalid_argument(msg.str());
  }
  for (const auto& [k, n] : root) {
    const std::string key(k.str());
    if (key == "daemon" && n.is_table()) {
      auto per_vif = std::move(s.per_vif);
      s = daemon_table(*n.as_table(), path);
      s.per_vif = std::move(per_vif);
    } else if (key == "vif" && n.is_table()) {
      s.per_vif = vif_tables(*n.as_table(), path);
    } else {
      bad(path + ": " + key, "unknown key or section (expected [daemon] or [vif.\"D.N\"])");
    }
  }
  return s;
}

}  // namespace unetback::daemon::detail
