#include <fmt/format.h>

#include "render.hpp"

namespace unetback::ctl {

namespace {

// The key as hex bytes, 16 a line (like Linux netback's debugfs `ctrl`).
std::string key_lines(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += fmt::format("{}{}", i % 32 == 0 ? "\n  " : " ", hex.substr(i, 2));
  }
  return out;
}

// The mapping table: 8 entries a line, each line headed by its first index.
std::string mapping_lines(const nlohmann::json& mapping) {
  std::string out;
  for (std::size_t i = 0; i < mapping.size(); ++i) {
    if (i % 8 == 0) {
      out += fmt::format("\n  [{:3}]", i);
    }
    out += fmt::format(" {:2}", mapping[i].get<unsigned>());
  }
  return out;
}

}  // namespace

std::string render_hash(const nlohmann::json& h) {
  const std::string name = h.value("name", "?");
  if (!h.value("control_ring", false)) {
    return name + ": no control ring (none connected, or the vif is not running)\n";
  }
  std::string types;
  for (const auto& t : h.value("types", nlohmann::json::array())) {
    types += (types.empty() ? "" : ", ") + t.get<std::string>();
  }
  const auto mapping = h.value("mapping", nlohmann::json::array());
  std::string out = fmt::format(
      "{}: {}\n", name,
      h.value("configured", false) ? "hash configured by the guest" : "the guest set no hash yet");
  out += fmt::format("algorithm: {}\n", h.value("algorithm", "?"));
  out += fmt::format("flags: {:#x} ({})\n", h.value("flags", 0U), types.empty() ? "none" : types);
  out += fmt::format("key:{}\n", key_lines(h.value("key", std::string())));
  out += fmt::format("mapping: {} entries over {} queues{}\n", mapping.size(),
                     h.value("num_queues", 0U),
                     mapping.empty() ? " (none: hash mod queues)" : mapping_lines(mapping));
  out += fmt::format("rx steering: {}\n",
                     h.value("steered", false)
                         ? "by this hash (the TAP's BPF program)"
                         : "unavailable (the TAP picks RX queues; see the daemon's start-up log)");
  return out;
}

}  // namespace unetback::ctl
