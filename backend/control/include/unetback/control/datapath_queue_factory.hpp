#pragma once
// control::queue_factory over the real data path: one datapath::queue per
// netif queue sharing one datapath::vif_shared_state, plus the control ring
// when the frontend set one up, and the RX steering that follows the
// guest's hash configuration.

#include <memory>
#include <string>

#include "unetback/control/queue_factory.hpp"
#include "unetback/platform/platform.hpp"
#include "unetback/steering/rss_program.hpp"

namespace unetback::control {

/// Queues open their grant and event-channel handles from `platform`, which
/// must outlive the factory and everything it creates, as must `steering`
/// (null: the guest's hash mapping is not honoured, the TAP's own flow
/// steering keeps each flow on one queue). `state_dir` (empty: none) holds
/// what a restarted daemon carries over per vif: each queue's response
/// journals and counters (<queue name>.state) and the guest's hash
/// configuration (vif<D>.<N>-ctrl.hash).
[[nodiscard]] std::unique_ptr<queue_factory> make_datapath_queue_factory(
    platform::platform& platform, steering::rss_program* steering = nullptr,
    std::string state_dir = {});

}  // namespace unetback::control
