// Finding a queue's event-channel interrupts in /proc/interrupts and reading
// an affinity list (backend/platform/xen/src/irq_affinity.hpp): what
// event_channel::colocate() on Xen relies on to move them to one CPU.

#include "irq_affinity.hpp"

#include <gtest/gtest.h>

namespace unetback::platform::xen_irq {
namespace {

constexpr const char* proc_interrupts =
    "           CPU0       CPU1       \n"
    " 24:       5774          0  xen-percpu    -virq      timer0\n"
    " 41:         50          0  xen-dyn-lateeoi    -event     evtchn:oxenstored\n"
    " 44:          1       2803  xen-dyn-lateeoi    -event     evtchn:vif3.0-q0\n"
    " 45:          1          0  xen-dyn-lateeoi    -event     evtchn:vif3.0-q0\n"
    " 46:          0          9  xen-dyn-lateeoi    -event     evtchn:vif3.0-q1\n"
    " 47:          0          0  xen-dyn-lateeoi    -event     evtchn:vif13.0-q0\n"
    "NMI:          0          0   Non-maskable interrupts\n";

TEST(IrqAffinity, FindsEveryInterruptOfOneHandleByItsFullName) {
  EXPECT_EQ(irqs_named(proc_interrupts, "evtchn:vif3.0-q0"), (std::vector<unsigned>{44, 45}));
  EXPECT_EQ(irqs_named(proc_interrupts, "evtchn:vif3.0-q1"), (std::vector<unsigned>{46}));
  // A name that only ends like ours, or one that is absent, matches nothing.
  EXPECT_EQ(irqs_named(proc_interrupts, "evtchn:vif3.0-q"), (std::vector<unsigned>{}));
  EXPECT_EQ(irqs_named(proc_interrupts, "0-q0"), (std::vector<unsigned>{}));
  EXPECT_EQ(irqs_named("", "evtchn:vif3.0-q0"), (std::vector<unsigned>{}));
  // Lines without an interrupt number (NMI:) are never taken.
  EXPECT_EQ(irqs_named(proc_interrupts, "interrupts"), (std::vector<unsigned>{}));
}

TEST(IrqAffinity, FirstCpuOfAnAffinityList) {
  EXPECT_EQ(first_cpu("1\n"), 1U);
  EXPECT_EQ(first_cpu("0-3,6"), 0U);
  EXPECT_EQ(first_cpu("12,14"), 12U);
  EXPECT_EQ(first_cpu(""), std::nullopt);
  EXPECT_EQ(first_cpu("x"), std::nullopt);
}

}  // namespace
}  // namespace unetback::platform::xen_irq
