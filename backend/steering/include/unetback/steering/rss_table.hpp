#pragma once
// Builds the steering program's table from a guest's hash configuration:
// the enabled types, the mapping, and the Toeplitz key folded into one
// 256-entry table per input byte, so that the XOR of the entries for an
// input's bytes equals rings::toeplitz_hash(key, input).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "rss_table.h"
#include "unetback/rings/ctrl_ring.hpp"

namespace unetback::steering {

/// The table for `config` (algorithm TOEPLITZ). Heap-allocated: 37 KiB.
[[nodiscard]] std::unique_ptr<unetback_rss_table> make_rss_table(const rings::hash_config& config);

/// The hash the program computes for `input` (the fold's reader side; the
/// unit tests check it against rings::toeplitz_hash).
[[nodiscard]] std::uint32_t folded_hash(const unetback_rss_table& table,
                                        std::span<const std::byte> input);

}  // namespace unetback::steering
