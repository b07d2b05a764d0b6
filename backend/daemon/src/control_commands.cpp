#include "control_commands.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "unetback/ctl/status_json.hpp"
#include "unetback/metrics/daemon_metrics.hpp"
#include "unetback/service/logging.hpp"

namespace unetback::daemon {

namespace {

using nlohmann::json;

std::vector<control::vif_status> vifs_matching(const control::supervisor& sup,
                                               const json& request) {
  const auto wanted = request.value("vif", std::string());
  std::vector<control::vif_status> out;
  control::daemon_status all = sup.status();
  for (control::vif_status& v : all.vifs) {
    if (wanted.empty() || wanted == v.name()) {
      out.push_back(std::move(v));
    }
  }
  if (!wanted.empty() && out.empty()) {
    throw std::invalid_argument(fmt::format("no vif named '{}'", wanted));
  }
  return out;
}

// list, stats: one entry per vif (status_json.hpp renders it).
template <class Render>
json each_vif(const control::supervisor& sup, const json& request, Render render) {
  json out = json::array();
  for (const auto& v : vifs_matching(sup, request)) {
    out.push_back(render(v));
  }
  return out;
}

json dump(const control::supervisor& sup, const json& request) {
  if (!request.contains("vif")) {
    throw std::invalid_argument("dump needs a vif");
  }
  return ctl::dump_entry(vifs_matching(sup, request).at(0));
}

// disable/enable name one vif ("vif<D>.<N>"); an unknown name is an error.
control::vif_id one_vif(const control::supervisor& sup, const json& request) {
  if (!request.contains("vif") || !request["vif"].is_string()) {
    throw std::invalid_argument(request.value("cmd", std::string()) + " needs a vif (vifD.N)");
  }
  return vifs_matching(sup, request).at(0).id;
}

json disable(control::supervisor& sup, const json& request) {
  sup.disable(one_vif(sup, request), "operator");
  return {{"name", request["vif"]}, {"disabled", true}};
}

json enable(control::supervisor& sup, const json& request) {
  const bool was_disabled = sup.enable(one_vif(sup, request));
  return {{"name", request["vif"]}, {"enabled", true}, {"was_disabled", was_disabled}};
}

// kick names one vif and optionally one queue (a non-negative integer).
json kick(control::supervisor& sup, const json& request) {
  const control::vif_id id = one_vif(sup, request);
  std::optional<unsigned> queue;
  if (request.contains("queue")) {
    if (!request["queue"].is_number_unsigned()) {
      throw std::invalid_argument("kick: queue must be a non-negative integer");
    }
    queue = request["queue"].get<unsigned>();
  }
  return {{"name", request["vif"]}, {"kicked", sup.kick(id, queue)}};
}

json hash(const control::supervisor& sup, const json& request) {
  const auto config = sup.hash_config(one_vif(sup, request));
  json out = {{"name", request["vif"]}, {"control_ring", config.has_value()}};
  if (config) {
    out.update(ctl::hash_entry(*config));
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
  return metrics::render_daemon_metrics(sup.status(), UNETBACK_VERSION);
}

void register_control_commands(ctl::control_server& server, control::supervisor& sup) {
  server.add_command("list", [&sup](const json& r) { return each_vif(sup, r, ctl::list_entry); });
  server.add_command("stats", [&sup](const json& r) { return each_vif(sup, r, ctl::stats_entry); });
  server.add_command("dump", [&sup](const json& r) { return dump(sup, r); });
  server.add_command("log-level", [](const json& r) { return log_level(r); });
  server.add_command("disable", [&sup](const json& r) { return disable(sup, r); });
  server.add_command("enable", [&sup](const json& r) { return enable(sup, r); });
  server.add_command("kick", [&sup](const json& r) { return kick(sup, r); });
  server.add_command("hash", [&sup](const json& r) { return hash(sup, r); });
  server.add_command("metrics", [&sup](const json&) { return json{{"text", metrics_text(sup)}}; });
}

}  // namespace unetback::daemon
