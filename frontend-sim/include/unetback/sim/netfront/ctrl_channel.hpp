#pragma once
// The frontend end of the control ring (feature-ctrl-ring, docs/protocol.md
// §4): one granted ring page and one event channel. Requests are sent one at
// a time and their responses awaited (bounded), as a Windows PV driver
// configures RSS. configure_toeplitz() sends the usual sequence.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "unetback/rings/netif.hpp"
#include "unetback/sim/netfront/frontend_keys.hpp"
#include "unetback/sim/netfront/frontend_memory.hpp"

namespace unetback::sim {

class ctrl_channel {
 public:
  ctrl_channel(frontend_memory& memory, domid backend);
  ~ctrl_channel();
  ctrl_channel(const ctrl_channel&) = delete;
  ctrl_channel& operator=(const ctrl_channel&) = delete;

  [[nodiscard]] ctrl_keys keys() const { return {page_.ref, port_}; }

  /// Sends one request and waits up to `timeout` for its response; nullopt
  /// on timeout or a malformed response.
  std::optional<rings::ctrl_response> call(
      std::uint16_t type, std::uint32_t d0, std::uint32_t d1 = 0, std::uint32_t d2 = 0,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
  /// SET_HASH_ALGORITHM(TOEPLITZ), SET_HASH_FLAGS(IPv4/IPv6 [+TCP]),
  /// SET_HASH_KEY (the 40-byte Microsoft RSS verification key),
  /// SET_HASH_MAPPING_SIZE and SET_HASH_MAPPING: `mapping` as given (at
  /// most 1024 entries, one page), or when empty 128 entries, entry i = i
  /// mod queues. Returns true if every step answered SUCCESS.
  bool configure_toeplitz(std::uint32_t queues, std::span<const std::uint32_t> mapping = {});

 private:
  frontend_memory& memory_;
  domid backend_;
  std::unique_ptr<frontend_events> ev_;
  shared_page page_;
  evtchn_port port_;
  rings::ctrl_front_ring ring_;
  std::uint16_t next_id_ = 0;
};

}  // namespace unetback::sim
