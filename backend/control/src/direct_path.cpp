#include "unetback/control/direct_path.hpp"

#include <spdlog/spdlog.h>

#include <exception>

#include "unetback/direct/fdb_refresh.hpp"
#include "unetback/direct/host_probe.hpp"

namespace unetback::control {

namespace {

class host_facts_source final : public direct_facts_source {
 public:
  direct::filter_facts filters() override { return direct::read_filter_facts(); }
  direct::port_facts port(std::string_view ifname, const tap::mac_address& guest_mac,
                          const direct::filter_facts& filters) override {
    return probe_.port(ifname, guest_mac, filters);
  }
  direct::bridge_facts bridge(std::string_view bridge,
                              const direct::filter_facts& filters) override {
    return probe_.bridge(bridge, filters);
  }

 private:
  direct::host_probe probe_;
};

}  // namespace

std::unique_ptr<direct_facts_source> make_host_facts_source() {
  return std::make_unique<host_facts_source>();
}

direct_path::direct_path(const boost::asio::any_io_executor& executor,
                         std::unique_ptr<direct_facts_source> facts, direct_path_options options)
    : facts_(std::move(facts)),
      options_(options),
      pairing_(options.ring_bytes, max_record),
      timer_(executor, [this] {
        probe();
        schedule();
      }) {
  schedule();
}

direct_path::~direct_path() = default;  // pairing_ unpublishes every table

direct::vif_key direct_path::key_of(const vif_id& id) {
  return (static_cast<direct::vif_key>(id.frontend.value()) << 16) | (id.devid & 0xFFFFU);
}

void direct_path::schedule() {
  timer_.arm_at(wakeup_timer::clock::now() + options_.probe_interval);
}

void direct_path::add(const vif_id& id, direct_vif vif) {
  direct::paired_vif paired;
  paired.guest = direct::direct_peer{vif.guest_mac, vif.mtu, vif.rx, 0};
  paired.queues = vif.ports;
  pairing_.add(key_of(id), std::move(paired));
  vifs_.insert_or_assign(id, std::move(vif));
  spdlog::info("{}: direct path offered ({} queues)", id.name(), vifs_.at(id).ports.size());
  probe();
}

void direct_path::remove(const vif_id& id) {
  if (vifs_.erase(id) == 0) {
    return;
  }
  pairing_.remove(key_of(id));
  std::erase_if(verdicts_,
                [&id](const auto& v) { return v.first.first == id || v.first.second == id; });
}

bool direct_path::paired(const vif_id& a, const vif_id& b) const {
  return pairing_.paired(key_of(a), key_of(b));
}

std::optional<direct_status> direct_path::status(const vif_id& id) const {
  const auto it = vifs_.find(id);
  if (it == vifs_.end()) {
    return std::nullopt;
  }
  direct_status s;
  for (const auto& [other, vif] : vifs_) {
    if (other != id && paired(id, other)) {
      s.peers.push_back(other);
    }
  }
  for (const direct::direct_port* port : it->second.ports) {
    s.queues.push_back(direct::read_counts(port->counters()));
  }
  return s;
}

direct::port_facts direct_path::facts_of(const vif_id& id, const direct_vif& vif,
                                         const direct::filter_facts& filters) {
  direct::port_facts f;
  try {
    f = facts_->port(vif.ifname(), vif.guest_mac, filters);
  } catch (const std::exception& e) {
    spdlog::debug("{}: direct path: no port facts: {}", id.name(), e.what());
    f = direct::port_facts{};  // on no bridge: the pair stays on the TAP path
  }
  f.domid = id.frontend.value();
  f.devid = id.devid;
  f.direct_enabled = true;
  return f;
}

void direct_path::probe() {
  if (vifs_.size() < 2) {
    pairing_.set_pairs({});
    return;
  }
  const auto filters = facts_->filters();
  std::vector<std::pair<vif_id, direct::port_facts>> ports;
  std::map<std::string, direct::bridge_facts> bridges;
  for (const auto& [id, vif] : vifs_) {
    ports.emplace_back(id, facts_of(id, vif, filters));
    if (const auto mtu = ports.back().second.mtu) {
      pairing_.set_mtu(key_of(id), *mtu);  // `ip link set ... mtu` since the vif connected
    }
    const auto& bridge = ports.back().second.bridge;
    if (!bridge.empty() && !bridges.contains(bridge)) {
      bridges.emplace(bridge, facts_->bridge(bridge, filters));
    }
  }
  const auto bridge_of = [&bridges](const direct::port_facts& f) {
    const auto it = bridges.find(f.bridge);
    return it == bridges.end() ? direct::bridge_facts{} : it->second;
  };
  std::vector<std::pair<direct::vif_key, direct::vif_key>> eligible;
  std::vector<bool> is_paired(ports.size(), false);
  for (std::size_t i = 0; i < ports.size(); ++i) {
    for (std::size_t j = i + 1; j < ports.size(); ++j) {
      const auto& [a, fa] = ports[i];
      const auto& [b, fb] = ports[j];
      const auto verdict = direct::judge_pair(fa, fb, bridge_of(fa));
      log_verdict(a, b, verdict);
      if (verdict.eligible()) {
        eligible.emplace_back(key_of(a), key_of(b));
        is_paired[i] = is_paired[j] = true;
      }
    }
  }
  pairing_.set_pairs(eligible);
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const auto& [id, facts] = ports[i];
    if (is_paired[i] && direct::fdb_refresh_due(facts, bridge_of(facts))) {
      for (direct::direct_port* port : vifs_.at(id).ports) {
        port->request_learning_frame();
      }
    }
  }
}

void direct_path::log_verdict(const vif_id& a, const vif_id& b, const direct::pair_verdict& v) {
  const auto [it, added] = verdicts_.try_emplace({a, b}, v.why);
  if (!added && it->second == v.why) {
    return;
  }
  it->second = v.why;
  if (v.eligible()) {
    spdlog::info("direct path {} <-> {}: on", a.name(), b.name());
  } else {
    spdlog::info("direct path {} <-> {}: off: {} ({})", a.name(), b.name(), to_string(v.why),
                 (v.on_second ? b : a).name());
  }
}

}  // namespace unetback::control
