// Decodes the input as "key=value" lines (the first byte picks the advertised
// queue maximum) and runs the frontend and backend key parsers over them.
// Invariants: no crash; an accepted configuration is within every bound.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "unetback/control/backend_keys.hpp"
#include "unetback/control/frontend_keys.hpp"

namespace {

using unetback::control::key_reader;

std::map<std::string, std::string, std::less<>> decode(std::string_view text) {
  std::map<std::string, std::string, std::less<>> keys;
  while (!text.empty() && keys.size() < 256) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const auto eq = line.find('=');
    if (eq != std::string_view::npos) {
      keys[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
  }
  return keys;
}

void check(bool ok) {
  if (!ok) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const unsigned max_queues = 1U + data[0] % 64U;
  const auto keys = decode(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  const key_reader read = [&keys](std::string_view key) -> std::optional<std::string> {
    const auto it = keys.find(key);
    return it == keys.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  const unetback::control::frontend_limits limits{
      unetback::control::vif_id{unetback::domid{7}, 3}, max_queues, 512, {}};
  const auto fe = unetback::control::parse_frontend_keys(read, limits);
  if (fe) {
    const auto& cfg = fe.value();
    check(!cfg.queues.empty() && cfg.queues.size() <= max_queues);
    check(cfg.xdp_headroom <= 512);
    for (const auto& q : cfg.queues) {
      check(q.name.size() <= 15);
      check(q.tx_port.value() >= 1 && q.tx_port.value() <= unetback::control::max_evtchn_port);
      check(q.rx_port.value() >= 1 && q.rx_port.value() <= unetback::control::max_evtchn_port);
    }
  } else {
    check(!fe.error().message().empty());
  }
  const auto be =
      unetback::control::parse_backend_keys(read, unetback::control::vif_id{unetback::domid{7}, 3});
  if (be) {
    check(be.value().frontend_path == "/local/domain/7/device/vif/3");
    check(be.value().mtu >= unetback::control::min_mtu &&
          be.value().mtu <= unetback::control::max_mtu);
  }
  return 0;
}
