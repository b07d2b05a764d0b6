#pragma once
// A vif's RX steering: follows the guest's hash configuration on the TAP.
// With Toeplitz configured (control ring), the vif's table goes into the
// rss_program's map and the program is attached to the TAP, so every frame
// for the guest lands on the TAP queue - and so the netif RX queue - that
// the guest's mapping names. Without it the program is detached and the
// TAP's own flow steering keeps each flow on the queue where the guest last
// sent that flow (tun automq), so a flow never bounces between queues.

#include <cstdint>

#include "unetback/rings/ctrl_ring.hpp"
#include "unetback/steering/rss_program.hpp"

namespace unetback::steering {

class tap_steering {
 public:
  /// `tap_queue_fd`: an attached queue of the vif's TAP (TUNSETSTEERINGEBPF
  /// is a device-wide call made through any attached queue); it must stay
  /// open while this object lives. Reads the TAP's ifindex (TUNGETIFF).
  tap_steering(rss_program& program, int tap_queue_fd);
  ~tap_steering();  // detaches the program and erases the table
  tap_steering(const tap_steering&) = delete;
  tap_steering& operator=(const tap_steering&) = delete;

  /// Applies a newly committed configuration (control-ring thread). Throws
  /// std::system_error when the kernel refuses.
  void apply(const rings::hash_config& config);

  /// Whether the program is attached now.
  [[nodiscard]] bool attached() const { return attached_; }
  /// The TAP's ifindex (the map key).
  [[nodiscard]] std::uint32_t ifindex() const { return ifindex_; }

 private:
  void attach(int program_fd);

  rss_program& program_;
  int tap_queue_fd_;
  std::uint32_t ifindex_;
  bool attached_ = false;
};

}  // namespace unetback::steering
