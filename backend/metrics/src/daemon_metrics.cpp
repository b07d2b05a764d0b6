#include "unetback/metrics/daemon_metrics.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "queue_families.hpp"
#include "unetback/control/xenbus_state.hpp"
#include "unetback/metrics/exposition.hpp"

namespace unetback::metrics {

namespace {

using control::xenbus_state;
using nlohmann::json;

// Every xenbus state, for the vif state-set (one sample per state).
constexpr std::array all_states{
    xenbus_state::unknown,     xenbus_state::initialising,  xenbus_state::init_wait,
    xenbus_state::initialised, xenbus_state::connected,     xenbus_state::closing,
    xenbus_state::closed,      xenbus_state::reconfiguring, xenbus_state::reconfigured};

// The control ring's counters (datapath_queue_factory's ctrl_counters()).
struct ctrl_family {
  const char* name;
  const char* help;
  std::array<const char*, 3> counters;  ///< several: one sample each, labelled reason
};
constexpr std::array<ctrl_family, 4> ctrl_families{{
    {"unetback_ctrl_requests_total", "Control-ring requests answered.", {"requests"}},
    {"unetback_ctrl_rejected_total",
     "Control-ring requests refused, by reason (the status answered).",
     {"not_supported", "invalid_parameter", "buffer_overflow"}},
    {"unetback_ctrl_events_total", "Control-ring event-channel events received.", {"events"}},
    {"unetback_ctrl_event_storm_backoffs_total",
     "Times the control ring's unmasking was delayed by an event storm (XSA-332).",
     {"event_storm_backoffs"}},
}};

// A counter as the status holds it; nothing when absent (no sample is
// better than a made-up zero).
std::optional<std::uint64_t> number(const json& object, const std::string& key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer() ||
      (!it->is_number_unsigned() && it->get<std::int64_t>() < 0)) {
    return std::nullopt;
  }
  return it->get<std::uint64_t>();
}

labels vif_labels(const json& v) {
  const auto domid = v.value("domid", 0U);
  const auto devid = v.value("devid", 0U);
  return {{"vif", fmt::format("vif{}.{}", domid, devid)},
          {"domid", std::to_string(domid)},
          {"devid", std::to_string(devid)}};
}

labels with(labels l, std::string name, std::string value) {
  l.emplace_back(std::move(name), std::move(value));
  return l;
}

void daemon_families(exposition& out, const json& status, std::string_view version) {
  out.family("unetback_build_info", metric_type::gauge, "The daemon's version (always 1).");
  out.sample("unetback_build_info", {{"version", std::string(version)}}, std::uint64_t{1});
  out.family("unetback_vifs", metric_type::gauge, "Vifs the daemon serves.");
  out.sample("unetback_vifs", {}, std::uint64_t{status.value("vifs", json::array()).size()});
  out.family("unetback_vifs_adopted_total", metric_type::counter,
             "Devices this daemon took over at start-up (resumed after a restart or upgrade).");
  out.sample("unetback_vifs_adopted_total", {}, number(status, "adopted").value_or(0));
}

// A gauge with one sample per vif, `value` of its status.
template <class Value>
void vif_gauge(exposition& out, const json& vifs, const char* name, const char* help, Value value) {
  out.family(name, metric_type::gauge, help);
  for (const json& v : vifs) {
    out.sample(name, vif_labels(v), static_cast<std::uint64_t>(value(v)));
  }
}

void vif_families(exposition& out, const json& vifs) {
  out.family("unetback_vif_state", metric_type::gauge,
             "The vif's xenbus state (backend side): 1 for the current state, else 0.");
  for (const json& v : vifs) {
    const auto current = v.value("state", std::string());
    for (const xenbus_state s : all_states) {
      const std::string name(control::name_of(s));
      out.sample("unetback_vif_state", with(vif_labels(v), "state", name),
                 std::uint64_t{name == current ? 1U : 0U});
    }
  }
  vif_gauge(out, vifs, "unetback_vif_disabled",
            "1 while the vif is disabled (unetbackctl disable, or a fault).",
            [](const json& v) { return v.value("disabled", false) ? 1U : 0U; });
  vif_gauge(out, vifs, "unetback_vif_frontend_fault",
            "1 while the vif is stopped because its frontend proved hostile.",
            [](const json& v) { return v.value("fault_kind", "") == "frontend" ? 1U : 0U; });
  vif_gauge(out, vifs, "unetback_vif_queues", "Queues of the vif.",
            [](const json& v) { return v.value("queues", json::array()).size(); });
}

void queue_samples(exposition& out, const queue_family& f, const json& v) {
  for (const json& q : v.value("queues", json::array())) {
    const labels l = with(vif_labels(v), "queue", std::to_string(q.value("queue", 0U)));
    for (const counter_source& s : f.sources) {
      const auto value = number(q, std::string(s.counter));
      if (!value) {
        continue;
      }
      const labels sl = s.reason.empty() ? l : with(l, "reason", s.reason);
      if (f.scale == 1) {
        out.sample(f.name, sl, *value);
      } else {
        out.sample(f.name, sl, static_cast<double>(*value) * f.scale);
      }
    }
  }
}

void ctrl_samples(exposition& out, const ctrl_family& f, const json& v) {
  const auto ctrl = v.find("ctrl");
  if (ctrl == v.end() || !ctrl->is_object()) {
    return;
  }
  for (const char* counter : f.counters) {
    if (counter == nullptr) {
      continue;
    }
    const auto value = number(*ctrl, counter);
    if (!value) {
      continue;
    }
    const bool by_reason = f.counters[1] != nullptr;
    out.sample(f.name, by_reason ? with(vif_labels(v), "reason", counter) : vif_labels(v), *value);
  }
}

}  // namespace

std::string render_daemon_metrics(const json& status, std::string_view version) {
  exposition out;
  const json vifs = status.value("vifs", json::array());
  daemon_families(out, status, version);
  vif_families(out, vifs);
  for (const queue_family& f : queue_families()) {
    out.family(f.name, metric_type::counter, f.help);
    for (const json& v : vifs) {
      queue_samples(out, f, v);
    }
  }
  for (const ctrl_family& f : ctrl_families) {
    out.family(f.name, metric_type::counter, f.help);
    for (const json& v : vifs) {
      ctrl_samples(out, f, v);
    }
  }
  return out.text();
}

}  // namespace unetback::metrics
