#pragma once
// Strict parsing of a netfront's XenStore keys (docs/protocol.md §1.7, §1.8,
// §6.2 items 1-3) into validated queue configurations. Pure: keys come from a
// reader function, so tests and the fuzzer feed a map. Everything is read
// once, at connect; later changes are never looked at.
//
// Rules:
//  * numbers are plain decimal (no sign, space, hex or trailing junk) and
//    range-checked;
//  * multi-queue-num-queues absent means 1; otherwise 1..advertised maximum;
//  * one queue: ring/event-channel keys at the top level; several: exactly in
//    queue-0/ .. queue-(Q-1)/, each complete;
//  * per queue, either event-channel-tx and event-channel-rx (split, both) or
//    event-channel (shared); one split key alone is inconsistent;
//  * request-rx-copy must be 1 (copy is the only receive mode);
//  * feature flags are "0" or "1" when present;
//  * ctrl-ring-ref and event-channel-ctrl come together or not at all;
//  * xdp-headroom is bounded (netfront writes 0 or 256).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "unetback/control/key_error.hpp"
#include "unetback/control/vif_id.hpp"
#include "unetback/datapath/queue_config.hpp"
#include "unetback/rings/ids.hpp"

namespace unetback::control {

/// Reads one key below the directory being parsed ("tx-ring-ref",
/// "queue-1/rx-ring-ref"); nullopt when it does not exist.
using key_reader = std::function<std::optional<std::string>(std::string_view key)>;

/// The control ring of a vif (feature-ctrl-ring), per device not per queue.
struct ctrl_ring_keys {
  grant_ref ref;     ///< ctrl-ring-ref
  evtchn_port port;  ///< event-channel-ctrl
};

/// Everything the frontend asked for, validated.
struct frontend_config {
  std::vector<datapath::queue_config> queues;  ///< one per queue, index order
  datapath::frontend_features features;
  std::optional<ctrl_ring_keys> ctrl_ring;
  std::uint32_t xdp_headroom = 0;
};

/// What the frontend is allowed to ask for, and what to fill in.
struct frontend_limits {
  vif_id vif;               ///< the frontend's domain (frontend-id) and the device id
  unsigned max_queues = 1;  ///< the multi-queue-max-queues we advertised
  std::uint32_t max_xdp_headroom = 512;
  datapath::queue_tuning tuning;  ///< copied into every queue_config
};

/// Highest event-channel port (FIFO ABI: EVTCHN_FIFO_NR_CHANNELS - 1); port 0
/// is never a bound port.
inline constexpr std::uint32_t max_evtchn_port = (1U << 17) - 1;

/// Parses the frontend directory through `read`.
[[nodiscard]] key_result<frontend_config> parse_frontend_keys(const key_reader& read,
                                                              const frontend_limits& limits);

/// The worker thread name of a queue: "vif<D>.<N>-q<K>", without the "vif"
/// prefix when that would exceed the 15 characters a thread name may have.
[[nodiscard]] std::string queue_thread_name(const vif_id& vif, unsigned queue);

/// The control-ring thread name: "vif<D>.<N>-ctrl", shortened like
/// queue_thread_name() to fit 15 characters.
[[nodiscard]] std::string ctrl_thread_name(const vif_id& vif);

}  // namespace unetback::control
