#pragma once
// The thread boundary of the data path: what stopped a worker or a
// control-ring thread is logged once and handed to the control plane; an
// exception escaping the loop becomes a backend fault, never a crash of the
// daemon.

#include <exception>
#include <optional>
#include <string>

#include "sweep_fault.hpp"
#include "unetback/datapath/fault.hpp"

namespace unetback::datapath {

/// Logs `f` ("<thread>: <kind> fault, stopped: <describe>") and calls
/// `on_fault` (if set), whose exceptions are logged, not propagated.
void report_fault(const std::string& thread_name, const fault& f, const fault_handler& on_fault);

/// Runs a thread's loop (returning a sweep_fault, empty when stopped) and
/// turns what ended it into a fault for `queue` (none: the control ring).
template <class Loop>
[[nodiscard]] std::optional<fault> run_to_fault(Loop&& loop, std::optional<queue_index> queue) {
  try {
    const sweep_fault found = loop();
    if (!found) {
      return std::nullopt;
    }
    return fault{found.source, found.detail, queue};
  } catch (const std::exception& e) {
    return fault{fault_source::thread, std::string("exception: ") + e.what(), queue};
  } catch (...) {
    return fault{fault_source::thread, "exception", queue};
  }
}

}  // namespace unetback::datapath
