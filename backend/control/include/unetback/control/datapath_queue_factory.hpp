#pragma once
// control::queue_factory over the real data path: one datapath::queue per
// netif queue sharing one datapath::vif_shared_state, plus the control ring
// when the frontend set one up.

#include <memory>

#include "unetback/control/queue_factory.hpp"
#include "unetback/platform/platform.hpp"

namespace unetback::control {

/// Queues open their grant and event-channel handles from `platform`, which
/// must outlive the factory and everything it creates.
[[nodiscard]] std::unique_ptr<queue_factory> make_datapath_queue_factory(
    platform::platform& platform);

}  // namespace unetback::control
