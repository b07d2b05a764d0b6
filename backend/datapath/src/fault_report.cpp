#include "fault_report.hpp"

#include <spdlog/spdlog.h>

namespace unetback::datapath {

void report_fault(const std::string& thread_name, const fault& f, const fault_handler& on_fault) {
  spdlog::error("{}: {} fault, stopped: {}", thread_name, to_string(f.kind()), f.describe());
  if (!on_fault) {
    return;
  }
  try {
    on_fault(f);
  } catch (const std::exception& e) {
    spdlog::error("{}: fault handler threw: {}", thread_name, e.what());
  }
}

}  // namespace unetback::datapath
