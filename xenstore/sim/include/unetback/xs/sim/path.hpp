#pragma once
// XenStore path rules (docs/misc/xenstore.txt, xenstored is_valid_nodename):
// absolute paths start with '/', contain only [A-Za-z0-9-/_@], no empty
// component, no trailing '/' except the root; relative paths resolve against
// the connection's home /local/domain/<domid>; "@..." names are special
// watch-only nodes (@introduceDomain, @releaseDomain).

#include <optional>
#include <string>
#include <string_view>

#include "unetback/rings/ids.hpp"

namespace unetback::xs::sim {

/// XENSTORE_ABS_PATH_MAX / XENSTORE_REL_PATH_MAX from xs_wire.h.
inline constexpr std::size_t abs_path_max = 3072;
inline constexpr std::size_t rel_path_max = 2048;

/// "/local/domain/<d>".
[[nodiscard]] std::string home_path(domid d);

/// True if `path` is a well-formed absolute node name.
[[nodiscard]] bool is_valid_absolute(std::string_view path);

/// True for the special watch names "@introduceDomain" and "@releaseDomain".
[[nodiscard]] bool is_special(std::string_view path);

/// Resolves a request path for connection domain `d`: absolute paths are
/// checked, relative ones are prefixed with home_path(d)+"/". nullopt if the
/// result is not a valid node name (the request then fails with EINVAL).
[[nodiscard]] std::optional<std::string> canonicalize(std::string_view path, domid d);

/// True if `path` equals `ancestor` or lies below it ("/a/b" is under "/a",
/// "/ab" is not; everything is under "/").
[[nodiscard]] bool is_at_or_below(std::string_view path, std::string_view ancestor);

/// The parent of an absolute path ("/a/b" -> "/a", "/a" -> "/"). The root has
/// no parent (returns "/").
[[nodiscard]] std::string parent_of(std::string_view path);

/// The last component of an absolute path ("/a/b" -> "b").
[[nodiscard]] std::string_view basename_of(std::string_view path);

}  // namespace unetback::xs::sim
