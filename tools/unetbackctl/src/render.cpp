#include "render.hpp"

#include <fmt/format.h>

#include <set>

namespace unetback::ctl {

std::string render_vif_list(const nlohmann::json& vifs) {
  std::string out = fmt::format("{:<16} {:>6} {:>5} {:<14} {:<16} {:>6} {}\n", "VIF", "DOMID",
                                "DEVID", "STATE", "TAP", "QUEUES", "DISABLED");
  for (const auto& v : vifs) {
    const bool disabled = v.value("disabled", v.value("failed", false));
    const std::string reason = v.value("disabled_reason", std::string());
    out += fmt::format("{:<16} {:>6} {:>5} {:<14} {:<16} {:>6} {}\n", v.value("name", "?"),
                       v.value("domid", 0), v.value("devid", 0), v.value("state", "?"),
                       v.value("tap", ""), v.value("queues", 0),
                       disabled ? (reason.empty() ? "yes" : reason) : "-");
  }
  return out;
}

std::string render_stats(const nlohmann::json& vifs, bool all) {
  std::string out;
  for (const auto& v : vifs) {
    const auto& queues = v.at("queues");
    out += fmt::format("{} ({} queues)\n", v.value("name", "?"), queues.size());
    std::set<std::string> names;
    for (const auto& q : queues) {
      for (const auto& [key, value] : q.at("counters").items()) {
        if (all || value.get<std::uint64_t>() != 0) {
          names.insert(key);
        }
      }
    }
    out += fmt::format("  {:<28}", "counter");
    for (const auto& q : queues) {
      out += fmt::format(" {:>14}", fmt::format("q{}", q.value("queue", 0)));
    }
    out += "\n";
    for (const auto& name : names) {
      out += fmt::format("  {:<28}", name);
      for (const auto& q : queues) {
        out += fmt::format(" {:>14}", q.at("counters").value(name, std::uint64_t{0}));
      }
      out += "\n";
    }
  }
  return out;
}

}  // namespace unetback::ctl
