#pragma once
// How the guest's TAP picks the TX queue of each frame the guest stack sends
// (benchmark lever: flow affinity on or off, docs/performance.md).
//
// netfront-sim reads TAP queue i into netif queue i, so the TAP's queue choice
// is the guest's TX queue choice, as Linux netfront's ndo_select_queue is:
//   flow    the kernel's own choice (tun's automatic flow steering: a flow's
//           hash, or the queue its last received frame came in on): every
//           frame of a flow goes to the same queue, as with Linux netfront's
//           skb_get_hash()-based selection;
//   random  a steering program (TUNSETSTEERINGEBPF) that sends every frame
//           to a random queue: the frames of one flow are spread over all
//           queues (and so over the backend's per-queue worker threads), the
//           "no flow affinity" side of the comparison.
// The host side follows: the vif TAP's flow table learns the queue each flow
// last arrived on, so with `random` the replies bounce between queues too.

#include <optional>
#include <string_view>

namespace unetback::sim {

/// The guest TAP's TX queue selection.
enum class tx_queue_select {
  flow,    ///< the kernel's flow steering (a flow stays on one queue)
  random,  ///< a BPF steering program: every frame to a random queue
};

/// "flow" or "random"; nullopt for anything else.
std::optional<tx_queue_select> parse_tx_queue_select(std::string_view text);

/// Attaches the `random` steering program to the multi-queue TAP that
/// `tap_queue_fd` (any of its queues) belongs to. The TAP keeps the program
/// until it is detached or the TAP is gone. Throws std::system_error (EPERM:
/// the kernel refuses BPF to this process).
void attach_random_tx_spread(int tap_queue_fd);

}  // namespace unetback::sim
