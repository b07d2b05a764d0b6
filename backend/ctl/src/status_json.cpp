#include "unetback/ctl/status_json.hpp"

#include <string>

namespace unetback::ctl {

namespace {

using nlohmann::json;

json ctrl_json(const datapath::ctrl_ring_counters& c) {
  return {{"requests", c.requests},
          {"not_supported", c.not_supported},
          {"invalid_parameter", c.invalid_parameter},
          {"buffer_overflow", c.buffer_overflow},
          {"events", c.events},
          {"event_storm_backoffs", c.event_storm_backoffs}};
}

}  // namespace

json list_entry(const control::vif_status& v) {
  return {{"name", v.name()},
          {"domid", v.id.frontend.value()},
          {"devid", v.id.devid},
          {"state", std::string(control::name_of(v.state))},
          {"tap", v.tap},
          {"failed", v.failure.has_value()},
          {"fault_kind", v.failure ? to_string(v.failure->kind) : ""},
          {"disabled", v.disabled()},
          {"disabled_reason", v.disabled_reason()},
          {"queues", v.queues.size()}};
}

json stats_entry(const control::vif_status& v) {
  json queues = json::array();
  for (const control::queue_status& q : v.queues) {
    queues.push_back({{"queue", q.index.value()}, {"counters", datapath::to_json(q.counters)}});
  }
  json entry = {{"name", v.name()}, {"queues", std::move(queues)}};
  if (v.ctrl) {
    entry["ctrl"] = ctrl_json(*v.ctrl);  // rejected requests stay visible
  }
  return entry;
}

json dump_entry(const control::vif_status& v) {
  json queues = json::array();
  for (const control::queue_status& q : v.queues) {
    queues.push_back({{"queue", q.index.value()}, {"dump", q.ring_dump}});
  }
  return {{"name", v.name()}, {"queues", std::move(queues)}};
}

}  // namespace unetback::ctl
