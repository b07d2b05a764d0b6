#pragma once
// A multi-queue TAP device with vnet_hdr, created through /dev/net/tun and
// configured with interface ioctls (no `ip` subprocess):
//   TUNSETIFF IFF_TAP|IFF_NO_PI|IFF_VNET_HDR|IFF_MULTI_QUEUE, one fd per queue
//   opened with the same name; TUNSETVNETHDRSZ 12; TUNSETOFFLOAD as asked;
//   optional TUNSETPERSIST (the interface outlives the daemon, so a restart
//   does not drop it from its bridge).
// The device keeps one control fd of its own, detached from the queue set
// (IFF_DETACH_QUEUE): the interface exists while the device object lives even
// with no data queue open, and no traffic is steered to a queue nobody reads.
// The interface is tracked by ifindex, since a hotplug script may rename it.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unetback/tap/mac.hpp"
#include "unetback/tap/tap_queue.hpp"

namespace unetback::tap {

/// Why this host cannot create TAP devices (nullopt: it can): /dev/net/tun
/// missing (tun not loaded, a dom0 without udev) or not openable. Checked at
/// start-up so that the cause is named once, not as every vif's failure.
[[nodiscard]] std::optional<std::string> tun_device_problem();

/// What to create.
struct tap_config {
  std::string name;       ///< interface name, 1-15 characters (vif65535.65535 fits)
  unsigned offloads = 0;  ///< TUN_F_* flags for TUNSETOFFLOAD (TUN_F_CSUM, TSO4...)
  bool persist = false;   ///< TUNSETPERSIST: survive the closing of every fd
};

class netns_handle;

/// A TAP interface and its control fd.
class tap_device {
 public:
  /// Creates the TAP, or attaches to an existing persistent one of the same
  /// name and flags. Throws std::system_error (nothing is left behind).
  static tap_device create(const tap_config& config);
  /// Same, inside the network namespace /run/netns/<netns>: only the calling
  /// thread enters it, for the duration of each call that needs it. The
  /// device keeps a handle so later queues and ioctls act in that namespace.
  static tap_device create_in_netns(std::string_view netns, const tap_config& config);

  /// Closes the control fd. The interface disappears once no queue fd is
  /// open, unless it is persistent.
  ~tap_device();
  tap_device(tap_device&& other) noexcept;
  tap_device& operator=(tap_device&& other) noexcept;
  tap_device(const tap_device&) = delete;
  tap_device& operator=(const tap_device&) = delete;

  /// The interface's current name (follows renames).
  [[nodiscard]] std::string name() const;
  [[nodiscard]] int ifindex() const { return ifindex_; }

  /// Opens one more queue fd (attached, non-blocking).
  [[nodiscard]] std::unique_ptr<tap_queue> open_queue();
  /// Opens `count` queues (all or nothing).
  [[nodiscard]] std::vector<std::unique_ptr<tap_queue>> open_queues(unsigned count);

  void set_mac(const mac_address& mac);
  [[nodiscard]] mac_address mac() const;
  void set_mtu(unsigned mtu);
  [[nodiscard]] unsigned mtu() const;
  /// Administrative state (IFF_UP).
  void set_up(bool up);
  [[nodiscard]] bool is_up() const;
  /// TUNSETOFFLOAD: TUN_F_* offloads the readers of the queues accept.
  void set_offloads(unsigned tun_flags);
  /// TUNSETCARRIER: link carrier as the bridge and the stack see it.
  void set_carrier(bool on);
  /// TUNSETPERSIST.
  void set_persist(bool persist);
  /// Clears persistence and closes the control fd: the interface goes away
  /// as soon as the last queue fd is closed. The object is then inert.
  void remove();

 private:
  struct impl;
  explicit tap_device(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
  int ifindex_ = 0;
};

/// SIOCBRADDIF: adds interface `ifindex` to bridge `bridge` (in the calling
/// thread's network namespace). Throws std::system_error.
void add_to_bridge(std::string_view bridge, int ifindex);

}  // namespace unetback::tap
