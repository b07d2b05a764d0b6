#include "unetback/metrics/daemon_metrics.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "direct_families.hpp"
#include "queue_families.hpp"
#include "unetback/control/xenbus_state.hpp"
#include "unetback/metrics/exposition.hpp"
#include "vif_labels.hpp"

namespace unetback::metrics {

namespace {

using control::xenbus_state;

// Every xenbus state, for the vif state-set (one sample per state).
constexpr std::array all_states{
    xenbus_state::unknown,     xenbus_state::initialising,  xenbus_state::init_wait,
    xenbus_state::initialised, xenbus_state::connected,     xenbus_state::closing,
    xenbus_state::closed,      xenbus_state::reconfiguring, xenbus_state::reconfigured};

// The control ring's counters, by family.
using ctrl_field = std::uint64_t datapath::ctrl_ring_counters::*;
struct ctrl_source {
  const char* reason;  ///< value of the `reason` label; nullptr: no such label
  ctrl_field field;
};
struct ctrl_family {
  const char* name;
  const char* help;
  std::vector<ctrl_source> sources;
};
const std::array<ctrl_family, 4>& ctrl_families() {
  using c = datapath::ctrl_ring_counters;
  static const std::array<ctrl_family, 4> all{{
      {"unetback_ctrl_requests_total",
       "Control-ring requests answered.",
       {{nullptr, &c::requests}}},
      {"unetback_ctrl_rejected_total",
       "Control-ring requests refused, by reason (the status answered).",
       {{"not_supported", &c::not_supported},
        {"invalid_parameter", &c::invalid_parameter},
        {"buffer_overflow", &c::buffer_overflow}}},
      {"unetback_ctrl_events_total",
       "Control-ring event-channel events received.",
       {{nullptr, &c::events}}},
      {"unetback_ctrl_event_storm_backoffs_total",
       "Times the control ring's unmasking was delayed by an event storm (XSA-332).",
       {{nullptr, &c::event_storm_backoffs}}},
  }};
  return all;
}

void daemon_families(exposition& out, const control::daemon_status& status,
                     std::string_view version) {
  out.family("unetback_build_info", metric_type::gauge, "The daemon's version (always 1).");
  out.sample("unetback_build_info", {{"version", std::string(version)}}, std::uint64_t{1});
  out.family("unetback_vifs", metric_type::gauge, "Vifs the daemon serves.");
  out.sample("unetback_vifs", {}, std::uint64_t{status.vifs.size()});
  out.family("unetback_vifs_adopted_total", metric_type::counter,
             "Devices this daemon took over at start-up (resumed after a restart or upgrade).");
  out.sample("unetback_vifs_adopted_total", {}, status.adopted);
}

// A gauge with one sample per vif, `value` of its status.
template <class Value>
void vif_gauge(exposition& out, const std::vector<control::vif_status>& vifs, const char* name,
               const char* help, Value value) {
  out.family(name, metric_type::gauge, help);
  for (const control::vif_status& v : vifs) {
    out.sample(name, vif_labels(v), static_cast<std::uint64_t>(value(v)));
  }
}

bool frontend_fault(const control::vif_status& v) {
  return v.failure && v.failure->kind == datapath::fault_kind::frontend;
}

void vif_families(exposition& out, const std::vector<control::vif_status>& vifs) {
  out.family("unetback_vif_state", metric_type::gauge,
             "The vif's xenbus state (backend side): 1 for the current state, else 0.");
  for (const control::vif_status& v : vifs) {
    for (const xenbus_state s : all_states) {
      out.sample("unetback_vif_state", with(vif_labels(v), "state", std::string(name_of(s))),
                 std::uint64_t{s == v.state ? 1U : 0U});
    }
  }
  vif_gauge(out, vifs, "unetback_vif_disabled",
            "1 while the vif is disabled (unetbackctl disable, or a fault).",
            [](const control::vif_status& v) { return v.disabled() ? 1U : 0U; });
  vif_gauge(out, vifs, "unetback_vif_frontend_fault",
            "1 while the vif is stopped because its frontend proved hostile.",
            [](const control::vif_status& v) { return frontend_fault(v) ? 1U : 0U; });
  vif_gauge(out, vifs, "unetback_vif_queues", "Queues of the vif.",
            [](const control::vif_status& v) { return v.queues.size(); });
}

void queue_samples(exposition& out, const queue_family& f, const control::vif_status& v) {
  for (const control::queue_status& q : v.queues) {
    const labels l = with(vif_labels(v), "queue", std::to_string(q.index.value()));
    for (const counter_source& s : f.sources) {
      const std::uint64_t value = q.counters.*s.field;
      const labels sl = s.reason.empty() ? l : with(l, "reason", s.reason);
      if (f.scale == 1) {
        out.sample(f.name, sl, value);
      } else {
        out.sample(f.name, sl, static_cast<double>(value) * f.scale);
      }
    }
  }
}

void ctrl_samples(exposition& out, const ctrl_family& f, const control::vif_status& v) {
  if (!v.ctrl) {
    return;  // no control ring: no sample (better than a made-up zero)
  }
  for (const ctrl_source& s : f.sources) {
    const labels l = s.reason == nullptr ? vif_labels(v) : with(vif_labels(v), "reason", s.reason);
    out.sample(f.name, l, (*v.ctrl).*s.field);
  }
}

}  // namespace

std::string render_daemon_metrics(const control::daemon_status& status, std::string_view version) {
  exposition out;
  daemon_families(out, status, version);
  vif_families(out, status.vifs);
  for (const queue_family& f : queue_families()) {
    out.family(f.name, metric_type::counter, f.help);
    for (const control::vif_status& v : status.vifs) {
      queue_samples(out, f, v);
    }
  }
  for (const ctrl_family& f : ctrl_families()) {
    out.family(f.name, metric_type::counter, f.help);
    for (const control::vif_status& v : status.vifs) {
      ctrl_samples(out, f, v);
    }
  }
  direct_families(out, status.vifs);
  return out.text();
}

}  // namespace unetback::metrics
