#pragma once
// A blocking client of unetbackd's control socket: one request, one reply.

#include <nlohmann/json.hpp>

#include <string>

namespace unetback::ctl {

/// Sends `request` to the daemon at `socket_path` and returns the "result" of
/// its reply. Throws std::runtime_error with an operator-facing message when
/// the daemon is not running or answers with an error.
nlohmann::json call(const std::string& socket_path, const nlohmann::json& request);

}  // namespace unetback::ctl
