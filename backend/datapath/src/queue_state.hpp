#pragma once
// A queue's state that must outlive the daemon process (restart without
// reconnect, docs/reliability.md): the response journal of each ring and the
// queue's counters, in a file of the state directory (a tmpfs such as /run)
// mapped shared. A `kill -9` loses nothing written here; a reboot loses all
// of it, together with the guest's rings. Without a file name the state lives
// in anonymous memory (tests, a daemon without a state directory).

#include <cstdint>
#include <string>

#include "response_journal.hpp"
#include "unetback/datapath/queue_config.hpp"
#include "unetback/datapath/queue_counters.hpp"
#include "unetback/rings/netif.hpp"

namespace unetback::datapath {

using tx_journal = response_journal<rings::tx_request, rings::tx_response>;
using rx_journal = response_journal<rings::rx_request, rings::rx_response>;

/// The file's layout. The identity fields tie it to one connection's rings.
struct persistent_queue_state {
  static constexpr std::uint64_t magic_value = 0x31657461'74537155ULL;  // "UqState1"
  std::uint64_t magic = 0;
  std::uint32_t layout_size = 0;  ///< sizeof(persistent_queue_state) that wrote it
  std::uint32_t frontend = 0;
  std::uint32_t tx_ring_ref = 0;
  std::uint32_t rx_ring_ref = 0;
  tx_journal::area tx;
  rx_journal::area rx;
  queue_counters counters;
};

class queue_state {
 public:
  /// Maps `config.state_file` (created 0600 if missing; anonymous memory if
  /// the name is empty). With config.resume and a file written for the same
  /// frontend and ring refs, the journals and counters carry on; otherwise
  /// they start empty. A file that cannot be used is logged and replaced by
  /// anonymous memory.
  explicit queue_state(const queue_config& config);
  ~queue_state();
  queue_state(const queue_state&) = delete;
  queue_state& operator=(const queue_state&) = delete;

  [[nodiscard]] persistent_queue_state& data() { return *state_; }
  /// True when the journals and counters were carried over from a file.
  [[nodiscard]] bool carried_over() const { return carried_over_; }

  /// Removes the file (the vif is gone for good). The mapping stays valid.
  static void discard(const std::string& state_file);

 private:
  persistent_queue_state* state_ = nullptr;
  bool carried_over_ = false;
};

}  // namespace unetback::datapath
