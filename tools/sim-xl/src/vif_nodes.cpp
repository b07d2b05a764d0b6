#include "vif_nodes.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

#include "vif_rate.hpp"

namespace unetback::toolstack {

namespace {

using xs::access;
using xs::permission;

std::vector<permission> owned_by(domid owner, domid reader) {
  return {{owner, access::none}, {reader, access::read}};
}

unsigned parse_unsigned(const std::string& key, const std::string& value, unsigned max) {
  unsigned out = 0;
  const auto* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, out);
  if (ec != std::errc{} || ptr != end || out > max) {
    throw std::invalid_argument(fmt::format("vifspec: bad value '{}' for {}", value, key));
  }
  return out;
}

}  // namespace

std::string backend_path(const vif_spec& spec) {
  return fmt::format("/local/domain/{}/backend/vif/{}/{}", spec.backend.value(), spec.guest.value(),
                     spec.devid);
}

std::string frontend_path(const vif_spec& spec) {
  return fmt::format("/local/domain/{}/device/vif/{}", spec.guest.value(), spec.devid);
}

std::string libxl_path(const vif_spec& spec) {
  return fmt::format("/libxl/{}/device/vif/{}", spec.guest.value(), spec.devid);
}

std::vector<node> vif_nodes(const vif_spec& spec) {
  const auto be = backend_path(spec);
  const auto fe = frontend_path(spec);
  const auto lx = libxl_path(spec);
  // libxl__device_generic_add: backend owned by the backend domain, readable by
  // the guest; frontend owned by the guest, readable by the backend; the
  // read-only frontend keys (mtu) owned by the backend domain.
  const auto be_perms = owned_by(spec.backend, spec.guest);
  const auto fe_perms = owned_by(spec.guest, spec.backend);
  const auto ro_fe_perms = owned_by(spec.backend, spec.guest);
  const std::vector<permission> lx_perms{{domid{0}, access::none}};
  const auto devid = std::to_string(spec.devid);

  std::vector<node> nodes{{be, "", be_perms}, {fe, "", fe_perms}, {lx, "", lx_perms}};
  auto backend_key = [&](const char* key, std::string value) {
    nodes.push_back({fmt::format("{}/{}", be, key), std::move(value), be_perms});
  };
  backend_key("frontend", fe);
  backend_key("frontend-id", std::to_string(spec.guest.value()));
  backend_key("online", "1");
  backend_key("state", "1");
  backend_key("script", spec.script);
  backend_key("mac", spec.mac);
  backend_key("bridge", spec.bridge);
  backend_key("handle", devid);
  backend_key("type", "vif");
  backend_key("hotplug-status", "");
  if (spec.mtu != 1500) {
    backend_key("mtu", std::to_string(spec.mtu));
  }
  if (!spec.ip.empty()) {
    backend_key("ip", spec.ip);
  }
  if (!spec.rate.empty()) {
    backend_key("rate", spec.rate);
  }
  if (!spec.vifname.empty()) {
    backend_key("vifname", spec.vifname);
  }
  auto frontend_key = [&](const char* key, std::string value, const auto& perms) {
    nodes.push_back({fmt::format("{}/{}", fe, key), std::move(value), perms});
  };
  frontend_key("backend", be, fe_perms);
  frontend_key("backend-id", std::to_string(spec.backend.value()), fe_perms);
  frontend_key("state", "1", fe_perms);
  frontend_key("handle", devid, fe_perms);
  frontend_key("mac", spec.mac, fe_perms);
  frontend_key("trusted", "1", fe_perms);
  frontend_key("mtu", std::to_string(spec.mtu), ro_fe_perms);
  for (const char* key : {"frontend", "backend"}) {
    nodes.push_back({fmt::format("{}/{}", lx, key), key[0] == 'f' ? fe : be, lx_perms});
  }
  return nodes;
}

void apply_vifspec(vif_spec& spec, const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string::npos) {
      comma = text.size();
    }
    const auto item = text.substr(start, comma - start);
    start = comma + 1;
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument(fmt::format("vifspec: '{}' is not key=value", item));
    }
    const auto key = item.substr(0, eq);
    const auto value = item.substr(eq + 1);
    if (key == "mac") {
      spec.mac = value;
    } else if (key == "bridge") {
      spec.bridge = value;
    } else if (key == "script") {
      spec.script = value;
    } else if (key == "ip") {
      spec.ip = value;
    } else if (key == "rate") {
      spec.rate = backend_rate(value);
    } else if (key == "vifname") {
      spec.vifname = value;
    } else if (key == "mtu") {
      spec.mtu = parse_unsigned(key, value, 65535);
    } else if (key == "devid") {
      spec.devid = parse_unsigned(key, value, 65535);
    } else if (key == "backend") {
      spec.backend = domid{static_cast<std::uint16_t>(parse_unsigned(key, value, 32752))};
    } else {
      throw std::invalid_argument(fmt::format("vifspec: unknown key '{}'", key));
    }
  }
}

}  // namespace unetback::toolstack
