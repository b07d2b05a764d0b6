#include "unetback/sim/netfront/frontend_device.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "unetback/rings/ids.hpp"

namespace unetback::sim {
namespace {

domid parse_domid(const std::string& s) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v > domid_max) {
    throw std::runtime_error("frontend key backend-id = '" + s + "' is not a domain id");
  }
  return domid{static_cast<std::uint16_t>(v)};
}

void add_counters(queue_counters& into, const queue_counters& from) {
  const auto add = [](std::atomic<std::uint64_t>& a, const std::atomic<std::uint64_t>& b) {
    a.fetch_add(b.load(std::memory_order_relaxed), std::memory_order_relaxed);
  };
  add(into.tx_packets, from.tx_packets);
  add(into.tx_bytes, from.tx_bytes);
  add(into.tx_dropped, from.tx_dropped);
  add(into.tx_error_responses, from.tx_error_responses);
  add(into.rx_packets, from.rx_packets);
  add(into.rx_bytes, from.rx_bytes);
  add(into.rx_errors, from.rx_errors);
  add(into.rx_dropped, from.rx_dropped);
  add(into.grants_busy, from.grants_busy);
  add(into.events, from.events);
  add(into.rx_partial_csum, from.rx_partial_csum);
  add(into.mcast_sent, from.mcast_sent);
  add(into.mcast_errors, from.mcast_errors);
  into.tx_max_slots.store(std::max(into.tx_max_slots.load(), from.tx_max_slots.load()));
}

}  // namespace

frontend_device::frontend_device(frontend_memory& memory, xs::client& xs, device_options options,
                                 tap_opener taps)
    : memory_(memory), xs_(xs), options_(std::move(options)), open_taps_(std::move(taps)) {
  fe_path_ = fmt::format("{}/device/vif/{}", xs_.get_domain_path(options_.self), options_.devid);
  const auto backend = xs_.read(fe_path_ + "/backend");
  const auto backend_id = xs_.read(fe_path_ + "/backend-id");
  if (!backend || !backend_id) {
    throw std::runtime_error("frontend dir " + fe_path_ + " lacks backend/backend-id");
  }
  be_path_ = *backend;
  be_id_ = parse_domid(*backend_id);
}

frontend_device::~frontend_device() {
  teardown();
}

void frontend_device::write_state(xenbus_state s) {
  xs_.write(fe_path_ + "/state", std::to_string(static_cast<int>(s)));
  state_ = s;
}

bool frontend_device::faulted() const {
  for (const auto& q : queues_) {
    if (q->faulted()) {
      return true;
    }
  }
  return false;
}

std::optional<xenbus_state> frontend_device::read_backend_state() {
  const auto v = xs_.read(backend_state_path());
  const auto s = v ? parse_xenbus_state(*v) : std::nullopt;
  if (!s) {
    return std::nullopt;
  }
  return static_cast<xenbus_state>(*s);
}

frontend_device::outcome frontend_device::on_backend_changed() {
  const auto be = read_backend_state();
  if (!be) {
    return outcome::waiting;  // not there yet (or vanished): keep watching
  }
  const bool be_closing = *be == xenbus_state::closing || *be == xenbus_state::closed;
  if (be_closing && state_ != xenbus_state::initialising && state_ != xenbus_state::closed) {
    spdlog::info("{}: backend is {}: closing", fe_path_, static_cast<int>(*be));
    close();
    if (!options_.reconnect) {
      return outcome::closed;
    }
    write_state(xenbus_state::initialising);
    return outcome::waiting;
  }
  if (*be == xenbus_state::init_wait && state_ == xenbus_state::initialising) {
    return start_handshake();
  }
  if (*be == xenbus_state::connected && state_ == xenbus_state::connected && !connected_) {
    return on_connected();
  }
  return outcome::waiting;
}

frontend_device::outcome frontend_device::start_handshake() {
  be_features_ = read_backend_features(
      [this](std::string_view key) { return xs_.read(be_path_ + "/" + std::string(key)); });
  if (!be_features_.rx_copy) {
    error_ = "backend does not support copying receive path (feature-rx-copy)";
    spdlog::error("{}: {}", fe_path_, error_);
    return outcome::failed;
  }
  std::uint32_t q = negotiate_queues(options_.request, be_features_);
  if (!taps_.empty()) {
    q = std::min<std::uint32_t>(q, static_cast<std::uint32_t>(taps_.size()));
  }
  queue_setup setup;
  setup.backend_id = be_id_;
  setup.split_event_channels =
      options_.request.split_event_channels && be_features_.split_event_channels;
  setup.backend = be_features_;
  setup.request = options_.request;
  for (std::uint32_t i = 0; i < q; ++i) {
    setup.index = queue_index{i};
    queues_.push_back(std::make_unique<frontend_queue>(memory_, setup));
  }
  if (options_.request.ctrl_ring && be_features_.ctrl_ring) {
    ctrl_ = std::make_unique<ctrl_channel>(memory_, be_id_);
  }
  write_keys(be_features_);
  for (auto& queue : queues_) {
    queue->fill_rx_ring();
  }
  write_state(xenbus_state::connected);
  spdlog::info("{}: {} queue(s) offered, state 4", fe_path_, q);
  return on_backend_changed();  // the backend may already be Connected
}

void frontend_device::write_keys(const backend_features& be) {
  std::vector<queue_keys> qk;
  for (const auto& queue : queues_) {
    qk.push_back(queue->keys());
  }
  const std::optional<ctrl_keys> ck = ctrl_ ? std::optional(ctrl_->keys()) : std::nullopt;
  const auto keys = build_frontend_keys(options_.request, be, qk, ck);
  xs_.transact([&](xs::transaction& t) {
    for (const auto& [key, value] : keys) {
      t.write(fe_path_ + "/" + key, value);
    }
    for (const auto& [key, value] : options_.key_overrides) {
      t.write(fe_path_ + "/" + key, value);
    }
  });
}

frontend_device::outcome frontend_device::on_connected() {
  if (taps_.empty()) {
    taps_ = open_taps_(static_cast<std::uint32_t>(queues_.size()), be_features_,
                       xs_.read(fe_path_ + "/mac"));
  }
  if (taps_.size() < queues_.size()) {
    error_ = "guest TAP has fewer queues than negotiated";
    return outcome::failed;
  }
  for (std::size_t i = 0; i < queues_.size(); ++i) {
    queues_[i]->start(*taps_[i]);
  }
  connected_ = true;
  spdlog::info("{}: connected to {} ({} queue(s))", fe_path_, be_path_, queues_.size());
  if (ctrl_) {
    ctrl_ok_ = ctrl_->configure_toeplitz(static_cast<std::uint32_t>(queues_.size()),
                                         options_.hash_mapping);
  }
  return outcome::connected;
}

void frontend_device::teardown() {
  for (auto& queue : queues_) {
    queue->stop();
  }
  if (retired_.empty()) {
    retired_ = std::vector<queue_counters>(queues_.size());
  }
  for (std::size_t i = 0; i < queues_.size() && i < retired_.size(); ++i) {
    add_counters(retired_[i], queues_[i]->counters());
  }
  queues_.clear();
  ctrl_.reset();
  connected_ = false;
  mcast_sent_.clear();  // a new connection starts with the backend's list empty
}

void frontend_device::sync_multicast_list(const std::vector<mac_bytes>& macs) {
  if (!connected_ || queues_.empty() || !be_features_.multicast_control ||
      !options_.request.multicast_control) {
    return;
  }
  const auto listed = [](const std::vector<mac_bytes>& list, const mac_bytes& mac) {
    return std::find(list.begin(), list.end(), mac) != list.end();
  };
  for (const mac_bytes& mac : mcast_sent_) {
    if (!listed(macs, mac)) {
      queues_.front()->post_multicast({false, mac});
    }
  }
  for (const mac_bytes& mac : macs) {
    if (!listed(mcast_sent_, mac)) {
      queues_.front()->post_multicast({true, mac});
    }
  }
  mcast_sent_ = macs;
}

void frontend_device::set_multicast_control(bool on) {
  xs_.write(fe_path_ + "/request-multicast-control", on ? "1" : "0");
}

void frontend_device::close() {
  if (state_ == xenbus_state::closed) {
    return;
  }
  try {
    write_state(xenbus_state::closing);
  } catch (const std::exception& e) {
    spdlog::warn("{}: cannot write state 5: {}", fe_path_, e.what());
  }
  teardown();
  try {
    write_state(xenbus_state::closed);
  } catch (const std::exception& e) {
    spdlog::warn("{}: cannot write state 6: {}", fe_path_, e.what());
    state_ = xenbus_state::closed;
  }
}

}  // namespace unetback::sim
