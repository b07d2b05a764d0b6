#pragma once
// XenStore node permissions (docs/misc/xenstore.txt "permissions"): a list
// whose first entry names the owner and the access of every domain not listed
// later; further entries grant access to specific domains. dom0 (privileged)
// and the owner always have full access.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unetback/rings/ids.hpp"

namespace unetback::xs {

/// Access granted by a permission entry (XS_PERM_READ / XS_PERM_WRITE bits).
enum class access : std::uint8_t {
  none = 0,   ///< 'n'
  read = 1,   ///< 'r'
  write = 2,  ///< 'w'
  both = 3,   ///< 'b'
};

/// One permission entry, e.g. {domid{3}, access::read} is "r3".
struct permission {
  domid id;                   ///< the domain the entry is about
  access acc = access::none;  ///< what it may do
  friend bool operator==(const permission&, const permission&) = default;
};

/// True if `a` includes read access.
[[nodiscard]] constexpr bool can_read(access a) {
  return (static_cast<unsigned>(a) & 1U) != 0;
}
/// True if `a` includes write access.
[[nodiscard]] constexpr bool can_write(access a) {
  return (static_cast<unsigned>(a) & 2U) != 0;
}

/// The wire form of a permission entry: 'n'|'r'|'w'|'b' followed by the
/// decimal domid, as in GET_PERMS replies and SET_PERMS requests.
[[nodiscard]] std::string to_string(const permission& p);

/// Parses the wire form strictly (one letter, decimal domid without sign or
/// junk, at most 65535). nullopt if malformed.
[[nodiscard]] std::optional<permission> parse_permission(std::string_view text);

/// Strict decimal parse of an unsigned value no larger than `max`; nullopt for
/// empty input, signs, whitespace, leading '+', trailing junk or overflow.
[[nodiscard]] std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t max);

}  // namespace unetback::xs
