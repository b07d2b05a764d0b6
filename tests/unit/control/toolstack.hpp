#pragma once
// What libxl 4.17 and Linux netfront write, reproduced for lifecycle tests
// (docs/protocol.md §1.3, §1.5, §8; NOTES.md "libxl / XenStore / hotplug").

#include <optional>
#include <string>

#include "unetback/rings/ids.hpp"
#include "unetback/xs/client.hpp"

namespace unetback::control::testing {

struct vif_spec {
  domid guest{1};
  unsigned devid = 0;
  domid backend{0};
  std::string bridge = "xenbr0";
  std::optional<unsigned> mtu;
  std::optional<std::string> vifname;

  [[nodiscard]] std::string backend_path() const;
  [[nodiscard]] std::string frontend_path() const;
};

/// libxl__device_nic_add: backend and frontend directories in one
/// transaction, with libxl's permissions.
void libxl_add(xs::client& tool, const vif_spec& v);
/// How a vif goes: `xl network-detach`, or with its domain (`xl destroy`).
enum class removal : std::uint8_t { detach, destroy };
/// online=0 and state=5 in one transaction; removal::destroy also deletes the
/// frontend directory.
void libxl_remove(xs::client& tool, const vif_spec& v, removal how);
/// The final cleanup after state 6: both directories go.
void libxl_delete(xs::client& tool, const vif_spec& v);
/// The hotplug script's success.
void hotplug_connected(xs::client& tool, const vif_spec& v);

/// Whether the frontend writes feature-sg (Mini-OS and other minimal
/// frontends do not).
enum class frontend_sg { on, off };

/// netfront: multi-queue-num-queues (the backend advertises a maximum),
/// ring and event-channel keys for `queues` queues, then state 4, in one
/// transaction. `num_queues_value` replaces the num-queues value written
/// (a hostile frontend).
void netfront_connect(xs::client& guest, const vif_spec& v, unsigned queues,
                      const std::optional<std::string>& num_queues_value = std::nullopt,
                      frontend_sg sg = frontend_sg::on);
/// netfront: writes its state node.
void netfront_state(xs::client& guest, const vif_spec& v, int state);

}  // namespace unetback::control::testing
