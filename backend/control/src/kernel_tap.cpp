// control::tap_factory over real TAP devices.

#include <net/if.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <system_error>

#include "unetback/control/tap_factory.hpp"
#include "unetback/tap/tap_device.hpp"

namespace unetback::control {

namespace {

class kernel_tap final : public vif_tap {
 public:
  explicit kernel_tap(tap::tap_device dev) : dev_(std::move(dev)) {}

  [[nodiscard]] std::string name() const override { return dev_.name(); }
  [[nodiscard]] int ifindex() const override { return dev_.ifindex(); }

  std::vector<std::unique_ptr<platform::frame_port>> open_queues(unsigned count) override {
    std::vector<std::unique_ptr<platform::frame_port>> ports;
    for (auto& q : dev_.open_queues(count)) {
      ports.push_back(std::move(q));
    }
    return ports;
  }
  void set_offloads(unsigned tun_flags) override { dev_.set_offloads(tun_flags); }
  void set_carrier(bool on) override { dev_.set_carrier(on); }
  [[nodiscard]] unsigned mtu() const override { return dev_.mtu(); }
  void set_mtu(unsigned mtu) override { dev_.set_mtu(mtu); }
  void add_to_bridge(const std::string& bridge) override {
    tap::add_to_bridge(bridge, dev_.ifindex());
  }
  void set_up() override { dev_.set_up(true); }
  void remove() override { dev_.remove(); }

 private:
  tap::tap_device dev_;
};

bool interface_exists(const std::string& name) {
  return ::if_nametoindex(name.c_str()) != 0;
}

class kernel_tap_factory final : public tap_factory {
 public:
  std::unique_ptr<vif_tap> create(const tap_request& request) override {
    if (request.vifname && *request.vifname != request.name && interface_exists(*request.vifname)) {
      try {
        return adopt(*request.vifname);
      } catch (const std::system_error& e) {
        spdlog::warn("{}: {} exists but is not a TAP of ours ({}); creating {}", request.name,
                     *request.vifname, e.what(), request.name);
      }
    }
    if (interface_exists(request.name)) {
      return adopt(request.name);
    }
    // Offloads follow the frontend's features at connect; none until then.
    tap::tap_device dev = tap::tap_device::create({.name = request.name, .persist = true});
    try {
      dev.set_mac(tap::backend_vif_mac);
      dev.set_mtu(request.mtu);
    } catch (...) {
      dev.remove();
      throw;
    }
    return std::make_unique<kernel_tap>(std::move(dev));
  }

 private:
  // A persistent TAP a previous daemon created and the hotplug script set up
  // (MAC, MTU, bridge, link up): attached to as it is. TUNSETIFF refuses an
  // interface that is not a TAP with our flags.
  static std::unique_ptr<vif_tap> adopt(const std::string& name) {
    return std::make_unique<kernel_tap>(tap::tap_device::create({.name = name, .persist = true}));
  }
};

}  // namespace

std::unique_ptr<tap_factory> make_kernel_tap_factory() {
  return std::make_unique<kernel_tap_factory>();
}

}  // namespace unetback::control
