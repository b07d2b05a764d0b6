#pragma once
// The gtest fixture of the hostile tier. Every scenario gets a fresh world:
// sim-xenstored + the real unetbackd, a well-behaved netfront-sim guest
// (domid 1) passing UDP echoes, and the in-process hostile guest (domid 2,
// attached, not yet connected). A scenario then
//   1. connects the hostile guest (device or manual mode),
//   2. begin_attack(): records the daemon's VmRSS and starts the good
//      guest's background traffic,
//   3. attacks,
//   4. asserts the policy outcome (expect_vif_disabled / expect_vif_connected
//      / expect_connect_refused + response statuses), the counter and the log
//      line,
//   5. expect_contained(): daemon alive, no sanitizer report, the good guest
//      kept >= 75 % of its echoes during the attack and still passes them,
//      VmRSS growth within the stated bound, log growth within its bound.
// TearDown stops the daemon with SIGTERM and expects a clean exit (status 0:
// no LeakSanitizer report either).

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "good_guest.hpp"
#include "hostile_guest.hpp"
#include "net_tools.hpp"
#include "world.hpp"

namespace unetback::hostile {

/// The memory bound every scenario states: the daemon's VmRSS may grow by at
/// most this much during an attack (ASan quarantine capped at 8 MiB; one
/// reconnect allocates a queue's buffers, about 2 MiB).
inline constexpr std::uint64_t default_rss_bound_kib = 32 * 1024;

/// What one attack may add to the daemon's log: guest-triggered lines are
/// rate-limited (10 per 5 s per call site and vif), so a scenario's few seconds of
/// attack stay far below this; one line per guest action would not.
inline constexpr std::size_t log_bound_bytes = 64 * 1024;

/// A packet's responses: statuses only.
std::vector<std::int16_t> statuses(const std::vector<rings::tx_response>& r);

/// Extra-info slot builders.
rings::extra_info gso_extra(std::uint8_t type, std::uint16_t size, std::uint8_t flags = 0);
rings::extra_info raw_extra(std::uint8_t type, std::uint8_t flags = 0);
rings::extra_info mcast_extra(std::uint8_t type, const mac_bytes& mac, std::uint8_t flags = 0);

class hostile_test : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  /// Override to change the hostile guest (queues, split channels...).
  virtual hostile_options hostile_config() { return {}; }
  /// Override to pass extra unetbackd flags.
  virtual world_options world_config() { return {}; }

  [[nodiscard]] world& w() { return *world_; }
  [[nodiscard]] good_guest& good() { return *good_; }
  [[nodiscard]] hostile_guest& guest() { return *hostile_; }

  /// Device mode: connects the hostile guest, stops queue 0's worker and
  /// returns a TX driver for it, after checking that one valid packet passes.
  tx_driver& connect_and_drive();
  /// The current TX driver (connect_and_drive / reconnect_and_drive).
  [[nodiscard]] tx_driver& tx() { return *tx_; }
  /// After a fault: reconnects and returns a fresh TX driver (checked).
  tx_driver& reconnect_and_drive();

  /// Starts the containment watch (RSS baseline, background traffic).
  void begin_attack();
  /// Ends it and asserts containment (see the file comment).
  void expect_contained(std::uint64_t rss_bound_kib = default_rss_bound_kib);

  /// Where a fault was found: a queue's rings (its `faults` counter counts
  /// it) or the control ring (no queue counter).
  enum class fault_at : std::uint8_t { queue, control_ring };
  /// The vif was disabled for `reason`: backend Closing (or Closed), the
  /// error node and the daemon log name the reason, and for a queue fault
  /// the queue's `faults` counter counted it.
  void expect_vif_disabled(const std::string& reason, fault_at where = fault_at::queue);
  /// A connect was refused: backend Closing/Closed and an error node
  /// containing `fragment`; the log names the vif.
  void expect_connect_refused(const std::string& fragment);
  /// The vif is still Connected and has no error node.
  void expect_vif_connected();

  /// Destroys the in-process hostile guest without any frontend handshake
  /// (as if the guest crashed): memory, grants, ports, XenStore connection.
  void drop_hostile_guest();
  /// Takes vif2.0 off the bridge: only frames a test injects reach the
  /// hostile guest's RX ring (no ARP floods from the good guest).
  void isolate_hostile_vif();

  /// A counter of vif2.0 (summed over queues).
  [[nodiscard]] std::uint64_t counter(const std::string& name);
  /// Waits until counter `name` reaches at least `value`.
  bool wait_counter(const std::string& name, std::uint64_t value);

 private:
  void dump_logs();

  std::unique_ptr<world> world_;
  std::unique_ptr<good_guest> good_;
  std::unique_ptr<hostile_guest> hostile_;
  std::unique_ptr<tx_driver> tx_;
  std::uint64_t rss_before_kib_ = 0;
  std::size_t log_before_bytes_ = 0;
  bool attack_running_ = false;
};

}  // namespace unetback::hostile
