#pragma once
// The control socket's replies about vifs, rendered from the control plane's
// status values (control/vif_status.hpp): `unetbackctl list`, `stats` and
// `dump` (and their --json) read exactly these objects.

#include <nlohmann/json.hpp>

#include "unetback/control/vif_status.hpp"

namespace unetback::ctl {

/// {"name", "domid", "devid", "state", "tap", "failed", "fault_kind",
/// "disabled", "disabled_reason", "queues": <count>}; fault_kind is
/// "frontend", "host" or "backend" for a failed vif, else "".
[[nodiscard]] nlohmann::json list_entry(const control::vif_status& v);

/// {"name", "queues": [{"queue", "counters": {...}}], "ctrl": {...}}; ctrl
/// (the control ring's counters) only with a control ring.
[[nodiscard]] nlohmann::json stats_entry(const control::vif_status& v);

/// {"name", "queues": [{"queue", "dump": <ring indices, text>}]}.
[[nodiscard]] nlohmann::json dump_entry(const control::vif_status& v);

/// The guest's receive-hash configuration as `unetbackctl hash` shows it
/// (what Linux netback's debugfs `ctrl` file shows): {"configured": bool
/// (the guest set anything), "algorithm": "none" | "toeplitz", "flags": N,
/// "types": ["ipv4", "ipv4+tcp", ...], "key": hex (max_hash_key_size bytes,
/// zero-padded as kept), "mapping_size": N, "mapping": [queue...]
/// (mapping_size entries), "num_queues": N}.
[[nodiscard]] nlohmann::json hash_entry(const control::hash_status& h);

}  // namespace unetback::ctl
