#pragma once
// The vif's network interface as the control plane uses it, behind an
// interface so lifecycle tests run without /dev/net/tun. Production: a
// persistent multi-queue TAP (tap::tap_device).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "unetback/platform/frame_port.hpp"

namespace unetback::control {

/// The backend-side interface vif<D>.<N>.
class vif_tap {
 public:
  virtual ~vif_tap() = default;
  /// Current name (the hotplug script may rename it). Throws
  /// std::system_error once the interface is gone.
  [[nodiscard]] virtual std::string name() const = 0;
  /// The interface's index, fixed for its life (link messages name it);
  /// 0 where there is no kernel interface (test doubles).
  [[nodiscard]] virtual int ifindex() const { return 0; }
  /// Opens `count` queue frame ports.
  [[nodiscard]] virtual std::vector<std::unique_ptr<platform::frame_port>> open_queues(
      unsigned count) = 0;
  /// TUNSETOFFLOAD for the connected frontend's features.
  virtual void set_offloads(unsigned tun_flags) = 0;
  /// Carrier on while a data path runs; off when disabled.
  virtual void set_carrier(bool on) = 0;
  /// The interface's MTU, and setting it. Throw std::system_error.
  [[nodiscard]] virtual unsigned mtu() const = 0;
  virtual void set_mtu(unsigned mtu) = 0;
  /// Enslaves the interface to `bridge` (used when hotplug is not awaited).
  virtual void add_to_bridge(const std::string& bridge) = 0;
  /// Sets the interface administratively up (used when hotplug is not
  /// awaited; otherwise the hotplug script does it, after renaming).
  virtual void set_up() = 0;
  /// Deletes the interface (persistence cleared).
  virtual void remove() = 0;
};

/// How a vif's TAP is made.
struct tap_request {
  std::string name;  ///< vif<D>.<N>
  unsigned mtu = 1500;
  /// The backend's `vifname`, the name the hotplug script gives the
  /// interface: a daemon that restarts finds its TAP under this name.
  std::optional<std::string> vifname;
};

/// Creates (or re-attaches to) a vif's interface. Throws std::system_error.
class tap_factory {
 public:
  virtual ~tap_factory() = default;
  [[nodiscard]] virtual std::unique_ptr<vif_tap> create(const tap_request& request) = 0;
};

/// The production factory: persistent multi-queue vnet_hdr TAP, MAC
/// fe:ff:ff:ff:ff:ff, MTU from the `mtu` key, administratively down until the
/// hotplug script brings it up (as the kernel netback leaves its vif): the
/// stock vif-bridge renames it first (`vifname=`), which Linux refuses for an
/// interface that is up. A TAP that exists already (persistent, a daemon
/// restart), under `vifname` or `name`, is adopted as it is.
std::unique_ptr<tap_factory> make_kernel_tap_factory();

}  // namespace unetback::control
