#pragma once
// What was wrong with a XenStore key the control plane parsed. Parsers return
// rings::result<T, key_error>; the vif turns an error into an error node and
// Closing for that vif only.

#include <string>

#include "unetback/rings/result.hpp"

namespace unetback::control {

/// A rejected key.
struct key_error {
  /// Why the key was rejected.
  enum class kind {
    missing,       ///< a required key is absent
    malformed,     ///< not strictly decimal / not the expected syntax
    out_of_range,  ///< parsed, but outside the allowed range
    inconsistent,  ///< contradicts another key (e.g. ring ref without port)
  };
  kind what = kind::missing;
  std::string key;     ///< path of the key, relative to the directory parsed
  std::string detail;  ///< e.g. "must be 1..8"

  /// "<key>: <what> (<detail>)", for logs and the XenStore error node.
  [[nodiscard]] std::string message() const;
};

/// A parsed value or the key that made parsing fail.
template <class T>
using key_result = rings::result<T, key_error>;

}  // namespace unetback::control
