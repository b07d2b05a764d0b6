#pragma once
// The direct path's control plane (docs/direct-path.md, "The wiring"): the vifs
// whose data paths run direct ports, the host facts about their bridge ports,
// read about once a second, the verdict on every pair of them, and the
// pairing that follows the verdicts. Runs on the control thread only.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "unetback/control/vif_id.hpp"
#include "unetback/control/vif_status.hpp"
#include "unetback/control/wakeup_timer.hpp"
#include "unetback/direct/direct_port.hpp"
#include "unetback/direct/filter_probe.hpp"
#include "unetback/direct/pair_policy.hpp"
#include "unetback/direct/pairing.hpp"
#include "unetback/rings/vnet_hdr.hpp"
#include "unetback/tap/mac.hpp"

namespace unetback::control {

/// A vif whose data path started with direct ports.
struct direct_vif {
  tap::mac_address guest_mac{};             ///< the backend's `mac`
  std::uint32_t mtu = 1500;                 ///< its TAP's MTU
  rings::offload_features rx;               ///< what its frontend takes on RX
  std::vector<direct::direct_port*> ports;  ///< one per queue, owned by its data path
  /// The TAP's current name (the hotplug script may rename it); throws once gone.
  std::function<std::string()> ifname;
};

/// Where the host facts come from: sysfs, procfs and netlink in production.
class direct_facts_source {
 public:
  virtual ~direct_facts_source() = default;
  [[nodiscard]] virtual direct::filter_facts filters() = 0;
  [[nodiscard]] virtual direct::port_facts port(std::string_view ifname,
                                                const tap::mac_address& guest_mac,
                                                const direct::filter_facts& filters) = 0;
  [[nodiscard]] virtual direct::bridge_facts bridge(std::string_view bridge,
                                                    const direct::filter_facts& filters) = 0;
};

/// The host's own facts (direct::host_probe and direct::read_filter_facts).
[[nodiscard]] std::unique_ptr<direct_facts_source> make_host_facts_source();

struct direct_path_options {
  std::chrono::milliseconds probe_interval{1000};
  std::size_t ring_bytes = std::size_t{8} << 20;  ///< per queue and peer
};

class direct_path {
 public:
  direct_path(const boost::asio::any_io_executor& executor,
              std::unique_ptr<direct_facts_source> facts, direct_path_options options = {});
  ~direct_path();
  direct_path(const direct_path&) = delete;
  direct_path& operator=(const direct_path&) = delete;

  /// A vif whose data path just started; judged at the next probe, which is now.
  void add(const vif_id& id, direct_vif vif);
  /// Before the vif's data path stops (direct::pairing::remove).
  void remove(const vif_id& id);
  /// One probe cycle: read the facts, judge every pair, pair the eligible ones.
  void probe();

  [[nodiscard]] bool paired(const vif_id& a, const vif_id& b) const;
  /// The vif's peers and its queues' direct counters; nullopt if not added.
  [[nodiscard]] std::optional<direct_status> status(const vif_id& id) const;

  /// The largest record a ring takes: a vnet header and a 64 KiB GSO frame.
  static constexpr std::size_t max_record = 70'000;

 private:
  [[nodiscard]] static direct::vif_key key_of(const vif_id& id);
  [[nodiscard]] direct::port_facts facts_of(const vif_id& id, const direct_vif& vif,
                                            const direct::filter_facts& filters);
  void log_verdict(const vif_id& a, const vif_id& b, const direct::pair_verdict& v);
  void schedule();

  std::unique_ptr<direct_facts_source> facts_;
  direct_path_options options_;
  direct::pairing pairing_;
  std::map<vif_id, direct_vif> vifs_;
  std::map<std::pair<vif_id, vif_id>, direct::pair_reason> verdicts_;  ///< the last, for logs
  wakeup_timer timer_;
};

}  // namespace unetback::control
