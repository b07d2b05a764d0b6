#include "fakes.hpp"

#include <stdexcept>
#include <system_error>

namespace unetback::control::testing {

namespace {

class fake_port : public platform::frame_port {
 public:
  [[nodiscard]] int fd() const override { return -1; }
  [[nodiscard]] std::size_t vnet_hdr_size() const override { return 12; }
  long read_frame(std::span<std::byte>) override { return 0; }
  long write_frame(std::span<const iovec>) override { return 0; }
};

class fake_tap : public vif_tap {
 public:
  explicit fake_tap(std::shared_ptr<fake_tap_state> s) : s_(std::move(s)) {}
  [[nodiscard]] std::string name() const override { return s_->name; }
  std::vector<std::unique_ptr<platform::frame_port>> open_queues(unsigned count) override {
    std::vector<std::unique_ptr<platform::frame_port>> ports;
    for (unsigned i = 0; i < count; ++i) {
      ports.push_back(std::make_unique<fake_port>());
    }
    s_->queues_opened += count;
    return ports;
  }
  void set_offloads(unsigned flags) override { s_->offloads = flags; }
  void set_carrier(bool on) override { s_->carrier = on; }
  [[nodiscard]] unsigned mtu() const override { return s_->mtu; }
  void set_mtu(unsigned mtu) override { s_->mtu = mtu; }
  void add_to_bridge(const std::string& bridge) override { s_->bridges.push_back(bridge); }
  void set_up() override { s_->up = true; }
  void remove() override { s_->removed = true; }

 private:
  std::shared_ptr<fake_tap_state> s_;
};

class fake_queues : public vif_queues {
 public:
  fake_queues(std::shared_ptr<fake_queues_state> s, bool fail) : s_(std::move(s)), fail_(fail) {}
  ~fake_queues() override { stop(); }
  void start() override {
    if (fail_) {
      throw std::system_error(EINVAL, std::generic_category(), "map tx ring");
    }
    s_->started = true;
  }
  void stop() override {
    if (s_->started) {
      s_->stopped = true;
    }
  }
  void set_multicast_control(bool on) override { s_->multicast = on; }
  void set_rate(std::uint64_t bytes, std::chrono::microseconds interval) override {
    s_->rate_bytes = bytes;
    s_->rate_interval = interval;
  }
  void apply_hash() override { ++s_->hash_applied; }
  [[nodiscard]] std::vector<queue_status> queue_statuses() const override {
    std::vector<queue_status> all;
    for (const auto& c : s_->configs) {
      queue_status q;
      q.index = c.index;
      q.counters.tx_packets = 7;
      all.push_back(q);
    }
    return all;
  }

 private:
  std::shared_ptr<fake_queues_state> s_;
  bool fail_;
};

}  // namespace

std::unique_ptr<vif_tap> fake_tap_factory::create(const tap_request& request) {
  if (on_create) {
    on_create(request);
  }
  if (fail) {
    throw std::system_error(EPERM, std::generic_category(), "TUNSETIFF " + request.name);
  }
  auto s = std::make_shared<fake_tap_state>();
  s->name = request.name;
  s->mtu = request.mtu;
  s->vifname = request.vifname;
  created.push_back(s);
  return std::make_unique<fake_tap>(s);
}

std::unique_ptr<vif_queues> fake_queue_factory::create(datapath::vif_datapath_config config) {
  auto s = std::make_shared<fake_queues_state>();
  s->configs = config.queues;
  s->ctrl_ring = config.ctrl_ring;
  s->taps = config.taps.size();
  s->on_fault = config.on_fault;
  s->on_hash_published = config.on_hash_published;
  created.push_back(s);
  return std::make_unique<fake_queues>(s, fail_start);
}

}  // namespace unetback::control::testing
