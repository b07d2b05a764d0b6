#pragma once
// The backend directory keys the toolstack wrote (docs/protocol.md §1.3, §1.6,
// §6.2 item 1): only dom0 can write them, but they are still checked, and the
// frontend path is only ever taken from here and verified.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "unetback/control/frontend_keys.hpp"
#include "unetback/control/key_error.hpp"
#include "unetback/rings/ids.hpp"
#include "unetback/tap/mac.hpp"

namespace unetback::control {

/// The `rate` key: `bytes` of credit every `usecs` microseconds.
struct rate_limit_keys {
  std::uint64_t bytes = 0;
  std::uint32_t usecs = 0;
  bool operator==(const rate_limit_keys&) const = default;
};

/// Parses "<bytes>,<usecs>" (both plain decimal, bytes >= 1, usecs 1..2^32-1).
[[nodiscard]] std::optional<rate_limit_keys> parse_rate(std::string_view text);

/// Validated backend keys of backend/vif/<D>/<N>.
struct backend_config {
  std::string frontend_path;     ///< /local/domain/<D>/device/vif/<N>
  domid frontend;                ///< frontend-id
  unsigned devid = 0;            ///< N (and `handle`)
  tap::mac_address guest_mac{};  ///< `mac`: the guest's address
  unsigned mtu = 1500;           ///< `mtu`, default 1500
  /// `rate` as written. Parsed by rate(): none (absent, or not
  /// <bytes>,<usecs>) is unlimited, as Linux's netback leaves a malformed one
  /// ("Failed to parse network rate limit. Traffic unlimited."), not a failure.
  std::optional<std::string> rate_text;
  std::optional<std::string> bridge;   ///< `bridge`
  std::optional<std::string> script;   ///< `script` (logged only)
  std::optional<std::string> vifname;  ///< `vifname` (logged only: the script renames)

  /// The parsed `rate_text`; none: unlimited.
  [[nodiscard]] std::optional<rate_limit_keys> rate() const {
    return rate_text ? parse_rate(*rate_text) : std::nullopt;
  }
};

/// MTU bounds: Ethernet minimum, and the largest a TAP accepts.
inline constexpr unsigned min_mtu = 68;
inline constexpr unsigned max_mtu = 65521;
/// ETH_DATA_LEN: the most a frontend without feature-sg can take per frame.
inline constexpr unsigned eth_data_len = 1500;

/// Parses backend/vif/<D>/<N> of `vif` through `read`. The frontend path
/// must be exactly /local/domain/<D>/device/vif/<N>, frontend-id must be <D>
/// and `handle`, when present, <N>.
[[nodiscard]] key_result<backend_config> parse_backend_keys(const key_reader& read,
                                                            const vif_id& vif);

}  // namespace unetback::control
