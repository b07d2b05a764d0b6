#include "unetback/datapath/vif_datapath.hpp"

#include <stdexcept>
#include <utility>

namespace unetback::datapath {

namespace {

std::shared_ptr<vif_shared_state> make_shared_state(const vif_datapath_config& config) {
  auto shared = std::make_shared<vif_shared_state>(static_cast<std::uint32_t>(config.queues.size()),
                                                   config.log_limits);
  if (!config.queues.empty()) {
    const queue_config& first = config.queues.front();
    shared->set_multicast_filtering(first.features.multicast_control);
    shared->credit().set_rate(first.tuning.rate_bytes, first.tuning.rate_interval);
  }
  if (config.ctrl_ring && config.on_hash_published) {
    shared->set_hash_observer(config.on_hash_published);
  }
  return shared;
}

}  // namespace

vif_datapath::vif_datapath(platform::platform& platform, vif_datapath_config config)
    : shared_(make_shared_state(config)) {
  if (config.taps.size() != config.queues.size()) {
    throw std::invalid_argument("vif_datapath: one TAP queue per netif queue");
  }
  if (!config.taps.empty()) {
    first_tap_fd_ = config.taps.front()->fd();
  }
  for (std::size_t i = 0; i < config.queues.size(); ++i) {
    queues_.push_back(std::make_unique<queue>(platform, std::move(config.queues[i]),
                                              std::move(config.taps[i]), shared_, config.on_fault));
  }
  if (config.ctrl_ring && !queues_.empty()) {
    const ctrl_ring_config& c = *config.ctrl_ring;
    ctrl_ = std::make_unique<control_ring>(platform, queues_.front()->config().frontend, c.ref,
                                           c.port, shared_, config.on_fault, c.thread_name);
  }
}

vif_datapath::~vif_datapath() {
  stop();
}

bool vif_datapath::restore_hash(const rings::hash_config& saved) {
  return ctrl_ != nullptr && ctrl_->restore_hash(saved);
}

void vif_datapath::start() {
  try {
    for (auto& q : queues_) {
      q->start();
    }
    if (ctrl_) {
      ctrl_->start();
    }
  } catch (...) {
    stop();
    throw;
  }
}

void vif_datapath::stop() {
  if (ctrl_) {
    ctrl_->stop();
  }
  for (auto& q : queues_) {
    q->stop();
  }
}

void vif_datapath::discard_state() {
  for (const auto& q : queues_) {
    queue::discard_state(q->config());
  }
}

void vif_datapath::set_multicast_filtering(bool on) {
  shared_->set_multicast_filtering(on);
}

void vif_datapath::set_rate(std::uint64_t bytes, std::chrono::microseconds interval) {
  shared_->credit().set_rate(bytes, interval);
}

std::vector<unsigned> vif_datapath::kick(std::optional<unsigned> q) {
  if (q && *q >= queues_.size()) {
    throw std::invalid_argument("no queue " + std::to_string(*q) + " (the vif has " +
                                std::to_string(queues_.size()) + ")");
  }
  std::vector<unsigned> kicked;
  for (const auto& each : queues_) {
    const unsigned index = each->config().index.value();
    if ((!q || *q == index) && each->kick()) {
      kicked.push_back(index);
    }
  }
  return kicked;
}

std::uint32_t vif_datapath::num_queues() const {
  return shared_->num_queues();
}

std::vector<queue_status> vif_datapath::queue_statuses() const {
  std::vector<queue_status> statuses;
  statuses.reserve(queues_.size());
  for (const auto& q : queues_) {
    statuses.push_back(queue_status{q->config().index, q->counters(), q->ring_dump()});
  }
  return statuses;
}

std::optional<hash_snapshot> vif_datapath::hash() const {
  if (!ctrl_) {
    return std::nullopt;
  }
  return shared_->read_hash();
}

std::optional<ctrl_ring_counters> vif_datapath::ctrl_counters() const {
  if (!ctrl_) {
    return std::nullopt;
  }
  return ctrl_->counters();
}

}  // namespace unetback::datapath
