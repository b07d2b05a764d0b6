#pragma once
// What stopped a data-path thread, as a value the control plane acts on: where
// it was found (source), whose doing it is (kind) and what exactly (detail).
// Blame decides what an operator is told: a guest that broke the protocol is a
// "frontend fault" (XSA-90: the data path marks, the control plane tears
// down); a TAP deleted under the worker is the host's; an exception escaping a
// worker is the backend's own (a bug or a resource failure).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "unetback/rings/ids.hpp"

namespace unetback::datapath {

/// Where a fault was found.
enum class fault_source : std::uint8_t {
  none,          ///< no fault (a step_result without one)
  tx_ring,       ///< the queue's TX ring (the frontend's requests)
  rx_ring,       ///< the queue's RX ring (the frontend's buffers)
  control_ring,  ///< the vif's control ring (feature-ctrl-ring)
  tap,           ///< the queue's TAP fd
  thread,        ///< an exception escaped the worker or control-ring thread
};

/// Whose doing a fault is.
enum class fault_kind : std::uint8_t {
  frontend,  ///< the guest broke the protocol
  host,      ///< the host took something away (the TAP was deleted)
  backend,   ///< the daemon itself failed (an exception escaped a thread)
};

[[nodiscard]] constexpr const char* to_string(fault_source s) {
  switch (s) {
    case fault_source::none:
      return "none";
    case fault_source::tx_ring:
      return "TX ring";
    case fault_source::rx_ring:
      return "RX ring";
    case fault_source::control_ring:
      return "control ring";
    case fault_source::tap:
      return "TAP";
    case fault_source::thread:
      return "thread";
  }
  return "unknown";
}

[[nodiscard]] constexpr const char* to_string(fault_kind k) {
  switch (k) {
    case fault_kind::frontend:
      return "frontend";
    case fault_kind::host:
      return "host";
    case fault_kind::backend:
      return "backend";
  }
  return "unknown";
}

/// The blame that goes with a source: the rings are the guest's, the TAP the
/// host's, a thread's exception the backend's.
[[nodiscard]] constexpr fault_kind kind_of(fault_source s) {
  switch (s) {
    case fault_source::tap:
      return fault_kind::host;
    case fault_source::thread:
    case fault_source::none:
      return fault_kind::backend;
    case fault_source::tx_ring:
    case fault_source::rx_ring:
    case fault_source::control_ring:
      return fault_kind::frontend;
  }
  return fault_kind::backend;
}

/// One fault, reported once by the thread that stopped on it.
struct fault {
  fault_source source = fault_source::none;
  std::string detail;                ///< e.g. "slot crosses a page boundary"
  std::optional<queue_index> queue;  ///< the queue; none for the control ring

  [[nodiscard]] fault_kind kind() const { return kind_of(source); }
  /// For logs and XenStore's error node: "queue 1: TX ring: <detail>".
  [[nodiscard]] std::string describe() const {
    std::string out;
    if (queue) {
      out = "queue " + std::to_string(queue->value()) + ": ";
    }
    if (source != fault_source::thread) {
      out += to_string(source);
      out += ": ";
    }
    return out + detail;
  }
};

/// Called on the faulting data-path thread, after it stopped touching the
/// rings. The receiver must only post to its own context (XSA-90).
using fault_handler = std::function<void(const fault&)>;

}  // namespace unetback::datapath
