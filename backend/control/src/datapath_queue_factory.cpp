#include "unetback/control/datapath_queue_factory.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <vector>

#include "hash_config_file.hpp"
#include "unetback/datapath/vif_datapath.hpp"
#include "unetback/steering/tap_steering.hpp"
#include "unetback/util/log_limits.hpp"

namespace unetback::control {

namespace {

// The control plane's side of a vif's data path: hands the data path its
// configuration, and on the control thread keeps what the data path only
// publishes (the guest's hash configuration) in the state directory and in
// the TAP's RX steering.
class datapath_vif_queues final : public vif_queues {
 public:
  datapath_vif_queues(platform::platform& platform, steering::rss_program* steering,
                      const std::string& state_dir, datapath::vif_datapath_config config)
      : name_(config.ctrl_ring ? config.ctrl_ring->thread_name : std::string()),
        resume_(!config.queues.empty() && config.queues.front().resume),
        datapath_(platform, with_state_files(std::move(config), state_dir)) {
    if (datapath_.has_ctrl_ring() && steering != nullptr) {
      steering_program_ = steering;
    }
    if (datapath_.has_ctrl_ring() && !state_dir.empty()) {
      hash_file_ = state_dir + "/" + name_ + ".hash";
    }
    if (resume_) {
      restore_hash_config();
    }
  }
  ~datapath_vif_queues() override { stop(); }
  datapath_vif_queues(const datapath_vif_queues&) = delete;
  datapath_vif_queues& operator=(const datapath_vif_queues&) = delete;

  void start() override {
    datapath_.start();
    start_steering();
  }

  void stop() override {
    steering_.reset();  // detaches through queue 0's TAP fd: before the queues close it
    datapath_.stop();
  }

  void apply_hash() override {
    const auto h = datapath_.hash();
    if (!h || h->generation == applied_generation_) {
      return;
    }
    applied_generation_ = h->generation;
    ++applied_;
    if (!hash_file_.empty()) {
      save_hash_config(hash_file_, h->config);
    }
    steer(h->config);
  }

  void discard_state() override {
    datapath_.discard_state();
    if (!hash_file_.empty()) {
      ::unlink(hash_file_.c_str());
    }
  }

  void set_multicast_control(bool on) override { datapath_.set_multicast_filtering(on); }
  void set_rate(std::uint64_t bytes, std::chrono::microseconds interval) override {
    datapath_.set_rate(bytes, interval);
  }
  [[nodiscard]] std::vector<queue_status> queue_statuses() const override {
    return datapath_.queue_statuses();
  }
  std::vector<unsigned> kick(std::optional<unsigned> q) override { return datapath_.kick(q); }

  [[nodiscard]] std::optional<hash_status> hash_config() const override {
    const auto h = datapath_.hash();
    if (!h) {
      return std::nullopt;
    }
    return hash_status{h->config, h->generation, datapath_.num_queues(), steering_ != nullptr,
                       applied_};
  }
  [[nodiscard]] std::optional<datapath::ctrl_ring_counters> ctrl_counters() const override {
    return datapath_.ctrl_counters();
  }

 private:
  // Each queue's state file (restart without reconnect) in the daemon's
  // state directory, if it has one.
  static datapath::vif_datapath_config with_state_files(datapath::vif_datapath_config c,
                                                        const std::string& state_dir) {
    if (!state_dir.empty()) {
      for (auto& q : c.queues) {
        q.state_file = state_dir + "/" + q.name + ".state";
      }
    }
    return c;
  }

  // RX steering follows the guest's hash configuration (control ring); the
  // configuration survives a stop/start, so a restart re-applies it.
  void start_steering() {
    if (steering_program_ == nullptr) {
      if (datapath_.has_ctrl_ring()) {
        spdlog::warn(
            "{}: RX steering unavailable (the daemon could not load its BPF program at "
            "start-up): the guest's hash mapping does not pick RX queues",
            name_);
      }
      return;
    }
    try {
      steering_ =
          std::make_unique<steering::tap_steering>(*steering_program_, datapath_.first_tap_fd());
    } catch (const std::system_error& e) {
      spdlog::warn("{}: RX steering unavailable, the guest's hash mapping is not honoured: {}",
                   name_, e.what());
      return;
    }
    applied_generation_ = 0;
    apply_hash();
  }

  // A resumed vif: the guest configured its hash before the restart and will
  // not do it again.
  void restore_hash_config() {
    if (hash_file_.empty()) {
      return;
    }
    const auto saved = load_hash_config(hash_file_);
    if (!saved) {
      return;
    }
    if (datapath_.restore_hash(*saved)) {
      spdlog::info("{}: hash configuration of the previous daemon restored", name_);
    } else {
      spdlog::warn("{}: saved hash configuration {} rejected", name_, hash_file_);
    }
  }

  // A refusal by the kernel is the host's problem, not the guest's: log it
  // and keep the vif.
  void steer(const rings::hash_config& config) {
    if (!steering_) {
      return;
    }
    try {
      steering_->apply(config);
    } catch (const std::system_error& e) {
      UNETBACK_LOG_LIMITED(datapath_.log_limits(), spdlog::level::warn,
                           "{}: RX steering update failed: {}", name_, e.what());
    }
  }

  std::string name_;  // "vif<D>.<N>-ctrl" (the control ring's thread), for log lines
  bool resume_;       // the rings were served before: take over the saved hash
  datapath::vif_datapath datapath_;
  steering::rss_program* steering_program_ = nullptr;
  std::string hash_file_;  // empty: no state directory or no control ring
  std::unique_ptr<steering::tap_steering> steering_;
  std::uint64_t applied_generation_ = 0;  // the hash generation saved and steered to
  std::uint64_t applied_ = 0;             // configurations saved and steered to
};

class datapath_queue_factory final : public queue_factory {
 public:
  datapath_queue_factory(platform::platform& p, steering::rss_program* steering,
                         std::string state_dir)
      : platform_(p), steering_(steering), state_dir_(std::move(state_dir)) {}
  std::unique_ptr<vif_queues> create(datapath::vif_datapath_config config) override {
    return std::make_unique<datapath_vif_queues>(platform_, steering_, state_dir_,
                                                 std::move(config));
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
