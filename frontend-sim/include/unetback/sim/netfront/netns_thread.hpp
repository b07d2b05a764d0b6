#pragma once
// Work inside the guest's network namespace without moving the process:
// setns() changes only the calling thread's namespace, so the work runs on a
// short-lived thread. What it opens there (TAP fds, sockets) stays in that
// namespace after the thread is gone.

#include <functional>
#include <string>

namespace unetback::sim {

/// Runs `work` on a thread that entered /run/netns/<netns> (empty: this
/// process's namespace) and joins it; rethrows what `work` throws. Throws
/// std::system_error when the namespace cannot be entered.
void run_in_netns(const std::string& netns, const std::function<void()>& work);

}  // namespace unetback::sim
