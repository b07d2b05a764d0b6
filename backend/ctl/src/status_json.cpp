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

json direct_json(const control::direct_status& d) {
  json peers = json::array();
  for (const control::vif_id& p : d.peers) {
    peers.push_back(p.name());
  }
  json queues = json::array();
  for (std::size_t q = 0; q < d.queues.size(); ++q) {
    const direct::direct_counts& c = d.queues[q];
    json to_host = json::object();
    for (std::size_t r = 1; r < c.to_host.size(); ++r) {  // 0 is `direct`: never to the host
      to_host[direct::label_of(static_cast<direct::route_reason>(r))] = c.to_host[r];
    }
    queues.push_back({{"queue", q},
                      {"tx_packets", c.tx_packets},
                      {"tx_bytes", c.tx_bytes},
                      {"tx_drops_full", c.tx_drops_full},
                      {"rx_packets", c.rx_packets},
                      {"rx_bytes", c.rx_bytes},
                      {"rx_drops_too_big", c.rx_drops_too_big},
                      {"learning_frames", c.learning_frames},
                      {"to_host", std::move(to_host)}});
  }
  return {{"peers", std::move(peers)}, {"queues", std::move(queues)}};
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
  if (v.direct) {
    entry["direct"] = direct_json(*v.direct);  // frames the TAP's statistics do not see
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
