#include "unetback/control/datapath_queue_factory.hpp"

#include <vector>

#include "unetback/datapath/control_ring.hpp"
#include "unetback/datapath/queue.hpp"
#include "unetback/datapath/queue_counters.hpp"
#include "unetback/datapath/vif_shared_state.hpp"

namespace unetback::control {

namespace {

class datapath_vif_queues final : public vif_queues {
 public:
  datapath_vif_queues(platform::platform& platform, connect_request req)
      : shared_(std::make_shared<datapath::vif_shared_state>(
            static_cast<std::uint32_t>(req.queues.size()))) {
    if (!req.queues.empty()) {
      shared_->set_multicast_filtering(req.queues.front().features.multicast_control);
    }
    for (std::size_t i = 0; i < req.queues.size(); ++i) {
      queues_.push_back(std::make_unique<datapath::queue>(
          platform, std::move(req.queues[i]), std::move(req.taps.at(i)), shared_, req.on_fault));
    }
    if (req.ctrl_ring && !queues_.empty()) {
      ctrl_ = std::make_unique<datapath::control_ring>(platform, queues_.front()->config().frontend,
                                                       req.ctrl_ring->ref, req.ctrl_ring->port,
                                                       shared_, req.on_fault, req.ctrl_thread_name);
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
    for (auto& q : queues_) {
      q->stop();
    }
  }

  void set_multicast_control(bool on) override {
    shared_->set_multicast_filtering(on);
    if (!on) {
      shared_->multicast_clear();
    }
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

 private:
  std::shared_ptr<datapath::vif_shared_state> shared_;
  std::vector<std::unique_ptr<datapath::queue>> queues_;
  std::unique_ptr<datapath::control_ring> ctrl_;
};

class datapath_queue_factory final : public queue_factory {
 public:
  explicit datapath_queue_factory(platform::platform& p) : platform_(p) {}
  std::unique_ptr<vif_queues> create(connect_request request) override {
    return std::make_unique<datapath_vif_queues>(platform_, std::move(request));
  }

 private:
  platform::platform& platform_;
};

}  // namespace

std::unique_ptr<queue_factory> make_datapath_queue_factory(platform::platform& platform) {
  return std::make_unique<datapath_queue_factory>(platform);
}

}  // namespace unetback::control
