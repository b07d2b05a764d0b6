#include "unetback/control/backend_keys.hpp"

#include "key_parser.hpp"
#include "unetback/rings/ids.hpp"
#include "unetback/xs/permission.hpp"

namespace unetback::control {

std::optional<rate_limit_keys> parse_rate(std::string_view text) {
  const auto comma = text.find(',');
  if (comma == std::string_view::npos) {
    return std::nullopt;
  }
  const auto bytes = xs::parse_decimal(text.substr(0, comma), UINT64_MAX);
  const auto usecs = xs::parse_decimal(text.substr(comma + 1), UINT32_MAX);
  if (!bytes || !usecs || *bytes == 0 || *usecs == 0) {
    return std::nullopt;
  }
  return rate_limit_keys{*bytes, static_cast<std::uint32_t>(*usecs)};
}

key_result<backend_config> parse_backend_keys(const key_reader& read, const vif_id& vif) {
  detail::key_parser p(read);
  backend_config cfg;
  const domid frontend = vif.frontend;
  const unsigned devid = vif.devid;
  cfg.devid = devid;
  cfg.frontend = domid{static_cast<std::uint16_t>(p.number("frontend-id", 0, domid_max))};
  if (p.ok() && cfg.frontend != frontend) {
    p.fail(key_error::kind::inconsistent, "frontend-id", "differs from the backend directory");
  }
  const std::string expected =
      "/local/domain/" + std::to_string(frontend.value()) + "/device/vif/" + std::to_string(devid);
  const auto path = p.raw("frontend");
  if (p.ok() && !path) {
    p.fail(key_error::kind::missing, "frontend", {});
  } else if (p.ok() && *path != expected) {
    p.fail(key_error::kind::inconsistent, "frontend", "must be " + expected);
  }
  cfg.frontend_path = expected;
  if (p.number_or("handle", 0, UINT32_MAX, devid) != devid && p.ok()) {
    p.fail(key_error::kind::inconsistent, "handle", "differs from the device id");
  }
  const auto mac = p.raw("mac");
  if (p.ok() && (!mac || !tap::parse_mac(*mac))) {
    p.fail(mac ? key_error::kind::malformed : key_error::kind::missing, "mac", "xx:xx:xx:xx:xx:xx");
  } else if (mac) {
    cfg.guest_mac = *tap::parse_mac(*mac);
  }
  cfg.mtu = static_cast<unsigned>(p.number_or("mtu", min_mtu, max_mtu, 1500));
  cfg.rate_text = p.raw("rate");
  cfg.bridge = p.raw("bridge");
  cfg.script = p.raw("script");
  cfg.vifname = p.raw("vifname");
  if (!p.ok()) {
    return p.error();
  }
  return cfg;
}

}  // namespace unetback::control
