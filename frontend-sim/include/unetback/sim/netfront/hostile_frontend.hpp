#pragma once
// Hooks for hostile-guest tests: a frontend that breaks the protocol on
// purpose, over a device whose handshake ran normally (frontend_device).
// Every call writes shared state directly, exactly as a malicious guest
// kernel could: arbitrary TX/RX ring entries and producer indices, arbitrary
// grants, event storms, arbitrary frontend XenStore values. Stop a queue's
// worker (stop_queue) before scribbling on its rings.

#include <cstdint>
#include <string_view>

#include "unetback/rings/netif.hpp"
#include "unetback/sim/netfront/frontend_device.hpp"

namespace unetback::sim {

class hostile_frontend {
 public:
  explicit hostile_frontend(frontend_device& device) : dev_(device) {}

  /// The queue `q` (throws std::out_of_range).
  frontend_queue& queue(std::uint32_t q);
  /// Stops queue `q`'s worker so the rings are ours alone.
  void stop_queue(std::uint32_t q);

  /// Writes `raw` into TX ring slot `ring_index` (free-running, masked).
  void write_tx_slot(std::uint32_t q, std::uint32_t ring_index, const rings::tx_request& raw);
  /// Writes an extra-info slot into TX ring slot `ring_index`.
  void write_tx_extra(std::uint32_t q, std::uint32_t ring_index, const rings::extra_info& raw);
  /// Publishes any TX req_prod value (release store), e.g. far beyond rsp_prod.
  void publish_tx_req_prod(std::uint32_t q, std::uint32_t value);
  /// Writes `raw` into RX ring slot `ring_index`.
  void write_rx_slot(std::uint32_t q, std::uint32_t ring_index, const rings::rx_request& raw);
  /// Publishes any RX req_prod value.
  void publish_rx_req_prod(std::uint32_t q, std::uint32_t value);
  /// Overwrites the shared ring header's event thresholds.
  void write_tx_rsp_event(std::uint32_t q, std::uint32_t value);

  // The grant and kick hooks write the sim platform's shared tables; on
  // other platforms they throw std::logic_error.

  /// Grants `page` of the guest with any flags/grantee (allocates a ref).
  grant_ref grant(std::uint32_t page, domid grantee, grant_mode mode);
  /// Revokes a grant now, even one the backend uses (as a guest may try).
  void revoke(grant_ref ref);
  /// Writes a raw grant entry (flags, grantee, frame) with no checks.
  void write_grant_entry(grant_ref ref, std::uint16_t flags, domid grantee, std::uint32_t frame);

  /// Sends `count` kicks on queue `q`'s TX port, each one a separate doorbell
  /// (the coalescing latch is cleared before every kick).
  void kick_storm(std::uint32_t q, std::uint32_t count);

  /// Writes any value to a key of the frontend dir (relative path).
  void write_key(std::string_view relative, std::string_view value);
  /// Removes a key (and below) of the frontend dir.
  void remove_key(std::string_view relative);

 private:
  std::byte* ring_page(const shared_page& page);
  guest_domain& sim_domain();
  frontend_device& dev_;
};

}  // namespace unetback::sim
