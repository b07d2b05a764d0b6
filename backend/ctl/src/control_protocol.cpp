#include "unetback/ctl/control_protocol.hpp"

#include <stdexcept>

namespace unetback::ctl {

nlohmann::json make_ok(nlohmann::json result) {
  return {{"ok", true}, {"result", std::move(result)}};
}

nlohmann::json make_error(std::string message) {
  return {{"ok", false}, {"error", std::move(message)}};
}

nlohmann::json parse_request(std::string_view line) {
  auto request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object() || !request.contains("cmd") || !request["cmd"].is_string()) {
    throw std::invalid_argument("request must be a JSON object with a string \"cmd\"");
  }
  return request;
}

}  // namespace unetback::ctl
