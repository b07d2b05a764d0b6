#pragma once
// The guest's receive-hash configuration as `unetbackctl hash` shows it
// (what Linux netback's debugfs `ctrl` file shows): algorithm, the enabled
// hash types, the key, the mapping (indirection) table.

#include <nlohmann/json.hpp>

#include <cstdint>

#include "unetback/rings/ctrl_ring.hpp"

namespace unetback::control {

/// {"configured": bool (the guest set anything), "algorithm": "none" |
/// "toeplitz", "flags": N, "types": ["ipv4", "ipv4+tcp", ...], "key": hex
/// (max_hash_key_size bytes, zero-padded as kept), "mapping_size": N,
/// "mapping": [queue...] (mapping_size entries), "num_queues": N}.
[[nodiscard]] nlohmann::json hash_config_json(const rings::hash_config& config,
                                              std::uint64_t generation, std::uint32_t num_queues);

}  // namespace unetback::control
