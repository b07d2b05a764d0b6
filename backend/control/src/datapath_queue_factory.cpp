#include "unetback/control/datapath_queue_factory.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <vector>

#include "hash_config_file.hpp"
#include "hash_config_json.hpp"
#include "unetback/datapath/control_ring.hpp"
#include "unetback/datapath/queue.hpp"
#include "unetback/datapath/queue_counters.hpp"
#include "unetback/datapath/vif_shared_state.hpp"
#include "unetback/steering/tap_steering.hpp"
#include "unetback/util/rate_limit.hpp"

namespace unetback::control {

namespace {

class datapath_vif_queues final : public vif_queues {
 public:
  datapath_vif_queues(platform::platform& platform, steering::rss_program* steering,
                      const std::string& state_dir, connect_request req)
      : shared_(std::make_shared<datapath::vif_shared_state>(
            static_cast<std::uint32_t>(req.queues.size()))) {
    if (!req.queues.empty()) {
      const datapath::queue_tuning& t = req.queues.front().tuning;
      shared_->set_multicast_filtering(req.queues.front().features.multicast_control);
      shared_->credit().set_rate(t.rate_bytes, t.rate_interval);  // the vif's, over its queues
    }
    steering_name_ = req.ctrl_thread_name;
    if (req.ctrl_ring && steering != nullptr && !req.taps.empty()) {
      steering_program_ = steering;
      steering_tap_ = req.taps.front().get();
    }
    if (req.ctrl_ring && !state_dir.empty()) {
      hash_file_ = state_dir + "/" + req.ctrl_thread_name + ".hash";
    }
    if (req.ctrl_ring) {
      shared_->set_hash_observer([this](const rings::hash_config& c) { hash_changed(c); });
    }
    for (std::size_t i = 0; i < req.queues.size(); ++i) {
      if (!state_dir.empty()) {
        req.queues[i].state_file = state_dir + "/" + req.queues[i].name + ".state";
      }
      queues_.push_back(std::make_unique<datapath::queue>(
          platform, std::move(req.queues[i]), std::move(req.taps.at(i)), shared_, req.on_fault));
    }
    if (req.ctrl_ring && !queues_.empty()) {
      ctrl_ = std::make_unique<datapath::control_ring>(platform, queues_.front()->config().frontend,
                                                       req.ctrl_ring->ref, req.ctrl_ring->port,
                                                       shared_, req.on_fault, req.ctrl_thread_name);
      restore_hash_config();
    }
  }
  ~datapath_vif_queues() override { stop(); }
  datapath_vif_queues(const datapath_vif_queues&) = delete;
  datapath_vif_queues& operator=(const datapath_vif_queues&) = delete;

  // All or nothing: a queue that fails to start stops the ones before it.
  void start() override {
    try {
      for (auto& q : queues_) {
        q->start();
      }
      if (ctrl_) {
        start_steering();
        ctrl_->start();
      }
    } catch (...) {
      stop();
      throw;
    }
  }

  void stop() override {
    if (ctrl_) {
      ctrl_->stop();
    }
    steering_.reset();  // detaches through a TAP queue fd: before the queues stop
    for (auto& q : queues_) {
      q->stop();
    }
  }

  void discard_state() override {
    for (const auto& q : queues_) {
      datapath::queue::discard_state(q->config());
    }
    if (!hash_file_.empty()) {
      ::unlink(hash_file_.c_str());
    }
  }

  // The list survives filtering going off (netif.h; Linux keeps it): Windows
  // XenVif toggles request-multicast-control and never re-sends addresses.
  void set_multicast_control(bool on) override { shared_->set_multicast_filtering(on); }
  void set_rate(std::uint64_t bytes, std::chrono::microseconds interval) override {
    shared_->credit().set_rate(bytes, interval);
  }

  [[nodiscard]] nlohmann::json counters() const override {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& q : queues_) {
      nlohmann::json j = datapath::to_json(q->counters());
      j["queue"] = q->config().index.value();
      j["ring"] = q->ring_dump();
      all.push_back(std::move(j));
    }
    return all;
  }

  std::vector<unsigned> kick(std::optional<unsigned> q) override {
    if (q && *q >= queues_.size()) {
      throw std::invalid_argument("no queue " + std::to_string(*q) + " (the vif has " +
                                  std::to_string(queues_.size()) + ")");
    }
    std::vector<unsigned> kicked;
    for (const auto& queue : queues_) {
      const unsigned index = queue->config().index.value();
      if ((!q || *q == index) && queue->kick()) {
        kicked.push_back(index);
      }
    }
    return kicked;
  }

  [[nodiscard]] nlohmann::json hash_config() const override {
    if (!ctrl_) {
      return nullptr;
    }
    const datapath::hash_snapshot h = shared_->read_hash();
    return hash_config_json(h.config, h.generation, shared_->num_queues());
  }

  [[nodiscard]] nlohmann::json ctrl_counters() const override {
    if (!ctrl_) {
      return nullptr;
    }
    const datapath::ctrl_ring_counters c = ctrl_->counters();
    return nlohmann::json{{"requests", c.requests},
                          {"not_supported", c.not_supported},
                          {"invalid_parameter", c.invalid_parameter},
                          {"buffer_overflow", c.buffer_overflow},
                          {"events", c.events},
                          {"event_storm_backoffs", c.event_storm_backoffs}};
  }

 private:
  // RX steering follows the guest's hash configuration (control ring); the
  // configuration survives a stop/start, so a restart re-applies it.
  void start_steering() {
    if (steering_program_ == nullptr) {
      return;
    }
    try {
      steering_ = std::make_unique<steering::tap_steering>(*steering_program_, steering_tap_->fd());
    } catch (const std::system_error& e) {
      spdlog::warn("{}: RX steering unavailable, the guest's hash mapping is not honoured: {}",
                   steering_name_, e.what());
      return;
    }
    if (shared_->hash_generation() > 0) {
      steer(shared_->read_hash().config);
    }
  }

  // A resumed vif: the guest configured its hash before the restart and will
  // not do it again.
  void restore_hash_config() {
    if (hash_file_.empty() || !queues_.front()->config().resume) {
      return;
    }
    const auto saved = load_hash_config(hash_file_);
    if (!saved) {
      return;
    }
    if (ctrl_->restore_hash(*saved)) {
      spdlog::info("{}: hash configuration of the previous daemon restored", steering_name_);
    } else {
      spdlog::warn("{}: saved hash configuration {} rejected", steering_name_, hash_file_);
    }
  }

  // Control-ring thread, on every committed change.
  void hash_changed(const rings::hash_config& config) {
    if (!hash_file_.empty()) {
      save_hash_config(hash_file_, config);
    }
    steer(config);
  }

  // Control-ring thread. A refusal by the kernel is the host's problem, not
  // the guest's: log it and keep the vif.
  void steer(const rings::hash_config& config) {
    if (!steering_) {
      return;
    }
    try {
      steering_->apply(config);
    } catch (const std::system_error& e) {
      UNETBACK_LOG_RATELIMITED(spdlog::level::warn, "{}: RX steering update failed: {}",
                               steering_name_, e.what());
    }
  }

  std::shared_ptr<datapath::vif_shared_state> shared_;
  std::vector<std::unique_ptr<datapath::queue>> queues_;
  steering::rss_program* steering_program_ = nullptr;
  platform::frame_port* steering_tap_ = nullptr;  // queue 0's TAP port, owned by queues_
  std::string steering_name_;                     // "vif<D>.<N>-ctrl", for log lines
  std::string hash_file_;                         // empty: no state directory or no control ring
  std::unique_ptr<steering::tap_steering> steering_;
  std::unique_ptr<datapath::control_ring> ctrl_;
};

class datapath_queue_factory final : public queue_factory {
 public:
  datapath_queue_factory(platform::platform& p, steering::rss_program* steering,
                         std::string state_dir)
      : platform_(p), steering_(steering), state_dir_(std::move(state_dir)) {}
  std::unique_ptr<vif_queues> create(connect_request request) override {
    return std::make_unique<datapath_vif_queues>(platform_, steering_, state_dir_,
                                                 std::move(request));
  }

 private:
  platform::platform& platform_;
  steering::rss_program* steering_;
  std::string state_dir_;
};

}  // namespace

std::unique_ptr<queue_factory> make_datapath_queue_factory(platform::platform& platform,
                                                           steering::rss_program* steering,
                                                           std::string state_dir) {
  return std::make_unique<datapath_queue_factory>(platform, steering, std::move(state_dir));
}

}  // namespace unetback::control
