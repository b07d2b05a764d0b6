#pragma once
// The guest's receive-hash configuration (control ring) kept in the state
// directory, so that a restarted daemon steers RX as before without asking
// the guest (which would not answer: it configured the hash once, at
// connect). Written by the control-ring thread on every committed change,
// read once when a vif is resumed. The file is the daemon's own (0600 in its
// state directory); what it holds is still checked before use
// (rings::ctrl_handler::restore).

#include <optional>
#include <string>

#include "unetback/rings/ctrl_ring.hpp"

namespace unetback::control {

/// Writes `config` to `path` atomically (a temporary file renamed over it).
/// Errors are logged, not thrown: the vif works without the record.
void save_hash_config(const std::string& path, const rings::hash_config& config);

/// The configuration saved at `path`, or nothing (no file, or not one of ours).
[[nodiscard]] std::optional<rings::hash_config> load_hash_config(const std::string& path);

}  // namespace unetback::control
