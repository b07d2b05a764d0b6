#pragma once
// Kick delivery shared by both ends of a simulated event channel.
//
// Sender (raise_event): set the direction's pending latch; only if it was
// clear and the receiver has not masked the port, send one doorbell datagram
// to the receiver's endpoint. Kicks therefore coalesce.
//
// Receiver (event_receiver): pending() consumes at most one doorbell, then
// scans its ports (the doorbell's first) for one that is pending and not
// privately masked, clears its latch, masks it and returns it. If another
// port is still claimable it rings its own doorbell, so the fd stays readable
// while work remains (doorbells lost to a full socket queue, max_dgram_qlen,
// are recovered this way too). unmask() clears the mask and, if a kick was
// latched meanwhile, rings its own doorbell: the event is delivered again.
// The exchange/load pairs are seq_cst on both sides (Dekker): either the
// sender sees the mask cleared or the unmasker sees the latch set.

#include <cstdint>
#include <optional>
#include <system_error>
#include <vector>

#include "unetback/sim/endpoint.hpp"
#include "unetback/sim/layout.hpp"

namespace unetback::sim::detail {

/// Which latch/mask pair of a port_entry a kick uses.
enum class direction : std::uint8_t { to_guest, to_backend };

struct latch {
  std::uint32_t* pending;
  std::uint32_t* masked;
};

inline latch latch_of(port_entry& e, direction d) {
  return d == direction::to_guest ? latch{&e.pending_to_guest, &e.masked_guest}
                                  : latch{&e.pending_to_backend, &e.masked_backend};
}

/// Latches a kick and rings the receiver's doorbell if needed. Returns the
/// send error (ENOENT/ECONNREFUSED: the receiver is gone), if any.
inline std::error_code raise_event(const endpoint& from, latch l, const endpoint_address& to,
                                   std::uint32_t dest_port) {
  if (shared(*l.pending).exchange(1) != 0 || shared(*l.masked).load() != 0) {
    return {};
  }
  return from.send_doorbell(to, dest_port);
}

/// The receive side of an event-channel handle. Not thread-safe.
class event_receiver {
 public:
  explicit event_receiver(const endpoint& ep) : ep_(ep) {}

  /// Starts receiving for `local_port` through latch `l` (unmasked).
  void add(std::uint32_t local_port, latch l);
  /// Stops receiving for `local_port`.
  void remove(std::uint32_t local_port);
  /// The next pending port (now masked), or nullopt. Never blocks.
  std::optional<std::uint32_t> pending();
  /// Unmasks `local_port`; a kick latched meanwhile is delivered again.
  void unmask(std::uint32_t local_port);

 private:
  struct slot {
    std::uint32_t port;
    latch l;
    bool masked;
  };
  bool claimable(const slot& s) const;
  bool claim(slot& s);

  const endpoint& ep_;
  std::vector<slot> slots_;
  std::size_t cursor_ = 0;
};

}  // namespace unetback::sim::detail
