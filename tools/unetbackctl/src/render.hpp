#pragma once
// Human-readable tables for unetbackctl's replies.

#include <nlohmann/json.hpp>

#include <string>

namespace unetback::ctl {

/// `list`: one line per vif.
[[nodiscard]] std::string render_vif_list(const nlohmann::json& vifs);
/// `stats`: per vif, a table with one column per queue and one row per
/// counter (counters that are zero on every queue are left out unless `all`).
[[nodiscard]] std::string render_stats(const nlohmann::json& vifs, bool all);

/// `hash`: the guest's hash configuration (algorithm, types, key, mapping).
[[nodiscard]] std::string render_hash(const nlohmann::json& hash);

}  // namespace unetback::ctl
