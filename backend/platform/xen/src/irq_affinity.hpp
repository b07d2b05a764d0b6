#pragma once
// Steering a Linux interrupt to one CPU through /proc (the evtchn device
// names each bound port's interrupt "evtchn:<opener's thread name>", and
// rebinds the event channel to the vCPU its affinity names).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace unetback::platform::xen_irq {

/// The interrupts whose name (the last field of a /proc/interrupts line) is
/// `name`, in the order listed.
[[nodiscard]] std::vector<unsigned> irqs_named(std::string_view proc_interrupts,
                                               std::string_view name);

/// The first CPU of an affinity list such as "1" or "0-3,6" (nullopt if none).
[[nodiscard]] std::optional<unsigned> first_cpu(std::string_view cpu_list);

/// Moves every interrupt named `name` to the CPU the first of them is
/// delivered to; returns that CPU (nullopt: none found, or /proc refused).
[[nodiscard]] std::optional<unsigned> colocate_irqs(const std::string& name);

}  // namespace unetback::platform::xen_irq
