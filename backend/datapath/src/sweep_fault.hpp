#pragma once
// A fault as a sweep finds it, on the per-packet path: a source and a static
// description, nothing allocated. The thread that stops on it turns it into a
// datapath::fault for the control plane (queue.cpp).

#include "unetback/datapath/fault.hpp"

namespace unetback::datapath {

struct sweep_fault {
  fault_source source = fault_source::none;
  const char* detail = nullptr;  ///< a static string (rings::to_string, tap_gone_fault)

  [[nodiscard]] explicit operator bool() const { return detail != nullptr; }
};

}  // namespace unetback::datapath
