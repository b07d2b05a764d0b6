#pragma once
// Fakes for vif lifecycle tests: a TAP factory and a data-path factory that
// record what the control plane asks of them.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "unetback/control/queue_factory.hpp"
#include "unetback/control/tap_factory.hpp"

namespace unetback::control::testing {

/// Shared record of what happened to one fake TAP.
struct fake_tap_state {
  std::string name;
  unsigned mtu = 0;
  bool removed = false;
  bool carrier = false;
  bool up = false;
  std::optional<std::string> vifname;  ///< as requested
  unsigned offloads = 0;
  unsigned queues_opened = 0;
  std::vector<std::string> bridges;
};

class fake_tap_factory : public tap_factory {
 public:
  /// Runs inside create(), e.g. to check the backend state at that moment.
  std::function<void(const tap_request&)> on_create;
  bool fail = false;
  std::vector<std::shared_ptr<fake_tap_state>> created;

  std::unique_ptr<vif_tap> create(const tap_request& request) override;
};

/// Shared record of one vif's fake data path.
struct fake_queues_state {
  std::uint64_t rate_bytes = 0;  ///< the last set_rate()
  std::chrono::microseconds rate_interval{0};
  std::vector<datapath::queue_config> configs;
  std::optional<datapath::ctrl_ring_config> ctrl_ring;
  std::size_t taps = 0;
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};
  std::optional<bool> multicast;
  datapath::fault_handler on_fault;
  std::function<void()> on_hash_published;
  std::atomic<int> hash_applied{0};  ///< apply_hash() calls
};

class fake_queue_factory : public queue_factory {
 public:
  bool fail_start = false;
  std::vector<std::shared_ptr<fake_queues_state>> created;

  std::unique_ptr<vif_queues> create(datapath::vif_datapath_config config) override;
};

}  // namespace unetback::control::testing
