// vif: the side effects of the state machine's actions.

#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <boost/asio/post.hpp>
#include <chrono>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "key_parser.hpp"
#include "unetback/control/vif.hpp"
#include "unetback/rings/vnet_hdr.hpp"
#include "unetback/util/log_limits.hpp"

namespace unetback::control {

using datapath::fault_kind;

namespace {

// One queue's counters as the log line at disconnect carries them (one JSON
// object per line: the lab reads them back, tools/xen-lab/dom0/lab-lib.sh).
nlohmann::json counters_line(const queue_status& q) {
  nlohmann::json j = {{"queue", q.index.value()}};
  q.counters.for_each_field(
      [&j](std::string_view name, std::uint64_t value) { j[std::string(name)] = value; });
  return j;
}

rings::offload_features offloads_of(const datapath::frontend_features& f) {
  rings::offload_features o;
  o.sg = f.sg;
  o.gso_tcpv4 = f.gso_tcpv4;
  o.gso_tcpv6 = f.gso_tcpv6;
  o.ipv6_csum_offload = f.ipv6_csum_offload;
  o.no_csum_offload = f.no_csum_offload;
  return o;
}

}  // namespace

bool vif::do_create_tap() {
  if (tap_) {
    return true;  // re-arm: the interface (and its bridge port) is kept
  }
  try {
    tap_request request{tag(), 1500, std::nullopt};
    if (config_) {
      request.mtu = config_->mtu;
      request.vifname = config_->vifname;
    }
    tap_ = env_.taps.create(request);
    spdlog::info("{}: TAP {} ready", tag(), tap_->name());
    return true;
  } catch (const std::exception& e) {
    fail(fault_kind::host, std::string("creating TAP: ") + e.what());
    return false;
  }
}

// docs/protocol.md §1.6, written in one transaction (only while the backend
// directory still exists).
bool vif::do_advertise_features() {
  const std::string max_queues = std::to_string(options_.max_queues);
  const std::array<std::pair<const char*, std::string>, 11> keys{{
      {"feature-sg", "1"},
      {"feature-gso-tcpv4", "1"},
      {"feature-gso-tcpv6", "1"},
      {"feature-ipv6-csum-offload", "1"},
      {"feature-rx-copy", "1"},
      {"feature-rx-flip", "0"},
      {"feature-multicast-control", "1"},
      {"feature-dynamic-multicast-control", "1"},
      {"feature-split-event-channels", options_.split_event_channels ? "1" : "0"},
      {"multi-queue-max-queues", max_queues},
      {"feature-ctrl-ring", "1"},
  }};
  try {
    return env_.xs.transact([&](xs::transaction& tx) {
      if (!tx.read(backend_path_ + "/state")) {
        return false;
      }
      for (const auto& [key, value] : keys) {
        tx.write(backend_path_ + "/" + key, value);
      }
      return true;
    });
  } catch (const std::exception& e) {
    fail(fault_kind::host, std::string("advertising features: ") + e.what());
    return false;
  }
}

frontend_limits vif::limits() const {
  frontend_limits l{id_, options_.max_queues, options_.max_xdp_headroom, options_.tuning};
  if (const auto rate = config_ ? config_->rate() : std::nullopt) {
    l.tuning.rate_bytes = rate->bytes;
    l.tuning.rate_interval = std::chrono::microseconds(rate->usecs);
  }
  return l;
}

// Hands the validated configuration to the data path: one TAP queue per
// netif queue, offloads matching the frontend, workers started.
void vif::start_data_path(frontend_config cfg) {
  tap_->set_offloads(rings::tun_offload_flags(offloads_of(cfg.features)));
  clamp_mtu_without_sg(cfg.features);
  datapath::vif_datapath_config req;
  // A restart or an enable: the rings were served before (queue_config::resume).
  const bool resume = resume_next() || backend_state_ == xenbus_state::connected;
  for (auto& q : cfg.queues) {
    q.resume = resume;
  }
  req.taps = tap_->open_queues(static_cast<unsigned>(cfg.queues.size()));
  auto direct_ports = wrap_direct_ports(req.taps);
  req.queues = std::move(cfg.queues);
  if (cfg.ctrl_ring) {
    req.ctrl_ring =
        datapath::ctrl_ring_config{cfg.ctrl_ring->ref, cfg.ctrl_ring->port, ctrl_thread_name(id_)};
  }
  req.log_limits = log_limits_;
  const std::uint64_t generation = ++connections_;
  // Called on a worker thread: only post to the control thread (XSA-90).
  req.on_fault = [weak = weak_from_this(), ex = env_.executor,
                  generation](const datapath::fault& f) {
    boost::asio::post(ex, [weak, generation, f] {
      if (auto self = weak.lock()) {
        self->on_fault(generation, f);
      }
    });
  };
  // One post in flight at most, however fast the guest sends SETs.
  req.on_hash_published = [weak = weak_from_this(), ex = env_.executor, generation,
                           posted = std::make_shared<std::atomic<bool>>(false)] {
    if (posted->exchange(true)) {
      return;
    }
    boost::asio::post(ex, [weak, generation, posted] {
      posted->store(false);
      if (auto self = weak.lock()) {
        self->on_hash_published(generation);
      }
    });
  };
  auto queues = env_.queues.create(std::move(req));
  queues->start();
  connection_ = connection_running{generation, std::move(queues), cfg.features.multicast_control};
  offer_direct_path(cfg.features, std::move(direct_ports));
  tap_->set_carrier(true);
}

std::vector<direct::direct_port*> vif::wrap_direct_ports(
    std::vector<std::unique_ptr<platform::frame_port>>& taps) const {
  std::vector<direct::direct_port*> ports;
  if (!options_.direct_path || env_.direct == nullptr) {
    return ports;
  }
  for (auto& tap : taps) {
    auto port = std::make_unique<direct::direct_port>(std::move(tap));
    ports.push_back(port.get());
    tap = std::move(port);
  }
  return ports;
}

void vif::offer_direct_path(const datapath::frontend_features& features,
                            std::vector<direct::direct_port*> ports) {
  if (ports.empty() || !config_) {
    return;
  }
  try {
    direct_vif v;
    v.guest_mac = config_->guest_mac;
    v.mtu = tap_->mtu();
    v.rx = offloads_of(features);
    v.ports = std::move(ports);
    v.ifname = [this] { return tap_->name(); };
    env_.direct->add(id_, std::move(v));
  } catch (const std::exception& e) {
    UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::warn, "{}: direct path not offered: {}",
                         tag(), e.what());
  }
}

std::optional<direct_status> vif::stop_data_path(connection_running& running) {
  std::optional<direct_status> last;
  if (env_.direct != nullptr) {
    last = env_.direct->status(id_);
    if (last) {
      last->peers.clear();  // paired no more
    }
    env_.direct->remove(id_);  // no peer's worker hands this vif a frame after this
  }
  running.queues->stop();
  return last;
}

void vif::clamp_mtu_without_sg(const datapath::frontend_features& features) {
  if (features.sg) {
    return;
  }
  try {
    const unsigned mtu = tap_->mtu();
    if (mtu > eth_data_len) {
      tap_->set_mtu(eth_data_len);
      UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::info,
                           "{}: MTU {} lowered to {}: the frontend has no feature-sg", tag(), mtu,
                           eth_data_len);
    }
  } catch (const std::system_error& e) {
    UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::warn, "{}: lowering the MTU: {}", tag(),
                         e.what());
  }
}

// Frontend Connected: read and validate every key once, then start the data
// path (docs/protocol.md §1.4 step 6). Without hotplug, bridge the TAP and
// bring it up here.
bool vif::do_connect() {
  if (!config_ || !tap_) {
    fail(fault_kind::backend, "connect without backend configuration or TAP");
    return false;
  }
  const std::string fe = config_->frontend_path + "/";
  const key_reader read = [&](std::string_view key) { return env_.xs.read(fe + std::string(key)); };
  const bool resuming = resume_next();
  try {
    auto keys = parse_frontend_keys(read, limits());
    if (!keys) {
      fail(fault_kind::frontend, "frontend " + keys.error().message());
      return false;
    }
    // Mapping the guest's rings and binding its ports fail mostly on what
    // the frontend wrote (a stale grant ref, a closed port): its doing.
    start_data_path(std::move(keys.value()));
  } catch (const std::exception& e) {
    fail(fault_kind::frontend, std::string("connecting: ") + e.what());
    return false;
  }
  if (!options_.wait_for_hotplug && !bring_tap_up(resuming)) {
    return false;
  }
  // Guest-triggered (a frontend can reconnect in a loop): rate-limited.
  UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::info, "{}: data path connected", tag());
  return true;
}

// Without hotplug scripts the daemon bridges the TAP and brings it up; a
// failure there is the host's (its bridge, its interface).
bool vif::bring_tap_up(bool resuming) {
  try {
    if (config_->bridge && !bridged_) {
      bridge_tap(resuming);
    }
    tap_->set_up();
    return true;
  } catch (const std::exception& e) {
    fail(fault_kind::host, std::string("bringing the TAP up: ") + e.what());
    return false;
  }
}

// An adopted TAP may already be a port of the bridge (EBUSY): not an error.
void vif::bridge_tap(bool adopted) {
  try {
    tap_->add_to_bridge(*config_->bridge);
  } catch (const std::exception& e) {
    if (!adopted) {
      throw;
    }
    spdlog::info("{}: bridge {}: {} (adopted TAP, kept as it is)", tag(), *config_->bridge,
                 e.what());
  }
  bridged_ = true;
}

// feature-dynamic-multicast-control: request-multicast-control may change
// while connected; re-read it on every refresh and pass changes on.
void vif::follow_multicast_control() {
  auto* running = std::get_if<connection_running>(&connection_);
  if (running == nullptr || !config_) {
    return;
  }
  try {
    const std::string key = "request-multicast-control";
    const key_reader read = [&](std::string_view k) {
      return env_.xs.read(config_->frontend_path + "/" + std::string(k));
    };
    detail::key_parser p(read);
    const bool on = p.flag(key);
    if (!p.ok()) {
      fail(fault_kind::frontend, "frontend " + p.error().message());
      env_.request_refresh(id_);
      return;
    }
    if (running->multicast_control != on) {
      running->queues->set_multicast_control(on);
      running->multicast_control = on;
      UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::info, "{}: multicast filtering {}", tag(),
                           on ? "on" : "off");
    }
  } catch (const std::exception& e) {
    UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::warn,
                         "{}: reading request-multicast-control: {}", tag(), e.what());
  }
}

void vif::warn_if_rate_ignored() const {
  if (config_ && config_->rate_text && !config_->rate()) {
    UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::warn,
                         "{}: rate '{}' is not <bytes>,<usecs>: traffic unlimited", tag(),
                         *config_->rate_text);
  }
}

// Compared as written: a refresh that finds the same text does nothing.
void vif::follow_rate() {
  vif_queues* running = queues();
  if (running == nullptr || !config_) {
    return;
  }
  try {
    auto text = env_.xs.read(backend_path_ + "/rate");
    if (text == config_->rate_text) {
      return;
    }
    config_->rate_text = std::move(text);
    warn_if_rate_ignored();
    const auto rate = config_->rate();
    running->set_rate(rate ? rate->bytes : 0, std::chrono::microseconds(rate ? rate->usecs : 0));
    UNETBACK_LOG_LIMITED(
        *log_limits_, spdlog::level::info, "{}: rate now {}", tag(),
        rate ? std::to_string(rate->bytes) + " bytes per " + std::to_string(rate->usecs) + " us"
             : std::string("unlimited"));
  } catch (const std::exception& e) {
    UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::warn, "{}: reading rate: {}", tag(),
                         e.what());
  }
}

// Stop workers first, so nothing touches the rings while they go away; keep
// the last counters for describe() and log them (one line per queue).
void vif::do_disconnect() {
  auto* running = std::get_if<connection_running>(&connection_);
  if (running == nullptr) {
    return;
  }
  connection_stopped stopped;
  stopped.last_direct = stop_data_path(*running);
  running->queues->discard_state();  // disconnected: nothing for a next daemon to resume
  stopped.last_queues = running->queues->queue_statuses();
  for (const auto& q : stopped.last_queues) {
    UNETBACK_LOG_LIMITED(*log_limits_, spdlog::level::info, "{}: counters at disconnect: {}", tag(),
                         counters_line(q).dump());
  }
  connection_ = std::move(stopped);
  if (tap_) {
    try {
      tap_->set_carrier(false);
    } catch (const std::exception& e) {
      spdlog::warn("{}: carrier off: {}", tag(), e.what());
    }
  }
}

// The device is gone for good: delete the TAP; hotplug-status goes only now,
// and only if the toolstack has not removed the directory already. The error
// node goes too: libxl does not remove it, and a stale reason would be read
// as the next device's with the same <D>/<N> (and would pile up in a driver
// domain's XenStore quota).
void vif::do_destroy(const vif_snapshot& s) {
  do_disconnect();
  if (tap_) {
    try {
      tap_->remove();
    } catch (const std::exception& e) {
      spdlog::warn("{}: removing TAP: {}", tag(), e.what());
    }
    tap_.reset();
  }
  if (s.present && !s.online) {
    try {
      env_.xs.rm(backend_path_ + "/hotplug-status");
    } catch (const std::exception& e) {
      spdlog::warn("{}: removing hotplug-status: {}", tag(), e.what());
    }
  }
  const std::string error_dir = env_.error_root + "/" + id_.xenstore_path();
  try {
    env_.xs.rm(error_dir);
  } catch (const std::exception& e) {
    spdlog::warn("{}: removing {}: {}", tag(), error_dir, e.what());
  }
  connection_ = connection_destroyed{};
  spdlog::info("{}: destroyed", tag());
}

}  // namespace unetback::control
