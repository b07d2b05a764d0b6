#pragma once
// The control-socket protocol shared by unetbackd and unetbackctl: one JSON
// object per line each way. Request {"cmd": NAME, ...args}; reply
// {"ok": true, "result": ...} or {"ok": false, "error": MESSAGE}.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace unetback::ctl {

/// Default socket path of the daemon.
inline constexpr std::string_view default_socket_path = "/run/unetback/unetbackd.sock";
/// Longest request line the daemon reads (anything longer closes the connection).
inline constexpr std::size_t max_request_bytes = std::size_t{64} * 1024;

[[nodiscard]] nlohmann::json make_ok(nlohmann::json result);
[[nodiscard]] nlohmann::json make_error(std::string message);

/// Parses a request line; throws std::invalid_argument with a message for
/// anything that is not an object with a string "cmd".
[[nodiscard]] nlohmann::json parse_request(std::string_view line);

}  // namespace unetback::ctl
