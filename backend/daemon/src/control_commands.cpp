#include "control_commands.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "unetback/metrics/daemon_metrics.hpp"
#include "unetback/service/logging.hpp"

namespace unetback::daemon {

namespace {

using nlohmann::json;

std::string vif_name(const json& v) {
  return fmt::format("vif{}.{}", v.value("domid", 0), v.value("devid", 0U));
}

// supervisor::describe() gives each queue as one flat object holding its
// counters plus "queue" and "ring"; unetbackctl wants {queue, counters}.
json queue_stats(const json& q) {
  json counters = json::object();
  for (const auto& [key, value] : q.items()) {
    if (value.is_number_unsigned()) {
      counters[key] = value;
    }
  }
  counters.erase("queue");
  return {{"queue", q.value("queue", 0U)}, {"counters", std::move(counters)}};
}

json vifs_matching(const control::supervisor& sup, const json& request) {
  const auto wanted = request.value("vif", std::string());
  json out = json::array();
  const json all = sup.describe();  // a named copy: iterating a temporary's member dangles
  for (const auto& v : all.at("vifs")) {
    if (wanted.empty() || wanted == vif_name(v)) {
      out.push_back(v);
    }
  }
  if (!wanted.empty() && out.empty()) {
    throw std::invalid_argument(fmt::format("no vif named '{}'", wanted));
  }
  return out;
}

json list(const control::supervisor& sup, const json& request) {
  json out = json::array();
  for (const auto& v : vifs_matching(sup, request)) {
    out.push_back({{"name", vif_name(v)},
                   {"domid", v.value("domid", 0)},
                   {"devid", v.value("devid", 0U)},
                   {"state", v.value("state", "")},
                   {"tap", v.value("tap", "")},
                   {"failed", v.value("failed", false)},
                   {"fault_kind", v.value("fault_kind", "")},
                   {"disabled", v.value("disabled", false)},
                   {"disabled_reason", v.value("disabled_reason", "")},
                   {"queues", v.value("queues", json::array()).size()}});
  }
  return out;
}

json stats(const control::supervisor& sup, const json& request) {
  json out = json::array();
  for (const auto& v : vifs_matching(sup, request)) {
    json queues = json::array();
    for (const auto& q : v.value("queues", json::array())) {
      queues.push_back(queue_stats(q));
    }
    json entry = {{"name", vif_name(v)}, {"queues", std::move(queues)}};
    if (v.contains("ctrl")) {
      entry["ctrl"] = v.at("ctrl");  // the control ring's counters (rejected requests)
    }
    out.push_back(std::move(entry));
  }
  return out;
}

json dump(const control::supervisor& sup, const json& request) {
  if (!request.contains("vif")) {
    throw std::invalid_argument("dump needs a vif");
  }
  const auto v = vifs_matching(sup, request).at(0);
  json queues = json::array();
  for (const auto& q : v.value("queues", json::array())) {
    queues.push_back({{"queue", q.value("queue", 0U)}, {"dump", q.value("ring", "")}});
  }
  return {{"name", vif_name(v)}, {"queues", std::move(queues)}};
}

// disable/enable name one vif ("vif<D>.<N>"); an unknown name is an error.
std::pair<domid, unsigned> one_vif(const control::supervisor& sup, const json& request) {
  if (!request.contains("vif") || !request["vif"].is_string()) {
    throw std::invalid_argument(request.value("cmd", std::string()) + " needs a vif (vifD.N)");
  }
  const auto v = vifs_matching(sup, request).at(0);
  return {domid{v.value("domid", std::uint16_t{0})}, v.value("devid", 0U)};
}

json disable(control::supervisor& sup, const json& request) {
  const auto [d, devid] = one_vif(sup, request);
  sup.disable(d, devid, "operator");
  return {{"name", request["vif"]}, {"disabled", true}};
}

json enable(control::supervisor& sup, const json& request) {
  const auto [d, devid] = one_vif(sup, request);
  const bool was_disabled = sup.enable(d, devid);
  return {{"name", request["vif"]}, {"enabled", true}, {"was_disabled", was_disabled}};
}

// kick names one vif and optionally one queue (a non-negative integer).
json kick(control::supervisor& sup, const json& request) {
  const auto [d, devid] = one_vif(sup, request);
  std::optional<unsigned> queue;
  if (request.contains("queue")) {
    if (!request["queue"].is_number_unsigned()) {
      throw std::invalid_argument("kick: queue must be a non-negative integer");
    }
    queue = request["queue"].get<unsigned>();
  }
  return {{"name", request["vif"]}, {"kicked", sup.kick(d, devid, queue)}};
}

json hash(const control::supervisor& sup, const json& request) {
  const auto [d, devid] = one_vif(sup, request);
  json config = sup.hash_config(d, devid);
  json out = {{"name", request["vif"]}, {"control_ring", !config.is_null()}};
  if (!config.is_null()) {
    out.update(config);
  }
  return out;
}

json log_level(const json& request) {
  const auto level = service::parse_log_level(request.value("level", std::string()));
  spdlog::set_level(level);
  spdlog::info("log level set to {}", spdlog::level::to_string_view(level));
  return json::object();
}

}  // namespace

std::string metrics_text(const control::supervisor& sup) {
  return metrics::render_daemon_metrics(sup.describe(), UNETBACK_VERSION);
}

void register_control_commands(ctl::control_server& server, control::supervisor& sup) {
  server.add_command("list", [&sup](const json& r) { return list(sup, r); });
  server.add_command("stats", [&sup](const json& r) { return stats(sup, r); });
  server.add_command("dump", [&sup](const json& r) { return dump(sup, r); });
  server.add_command("log-level", [](const json& r) { return log_level(r); });
  server.add_command("disable", [&sup](const json& r) { return disable(sup, r); });
  server.add_command("enable", [&sup](const json& r) { return enable(sup, r); });
  server.add_command("kick", [&sup](const json& r) { return kick(sup, r); });
  server.add_command("hash", [&sup](const json& r) { return hash(sup, r); });
  server.add_command("metrics", [&sup](const json&) { return json{{"text", metrics_text(sup)}}; });
}

}  // namespace unetback::daemon
