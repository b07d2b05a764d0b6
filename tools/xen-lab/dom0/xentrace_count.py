#!/usr/bin/env python3
"""What the hypervisor did for each domain during a window: counts of the PV
guests' hypercalls by operation, multicall subcalls, and the PV entries Xen
handles for a guest (traps, page faults, emulated page-table writes and
privileged instructions), from a binary trace written by `xentrace -e 0x0022f000`
(the PV class and the scheduler's runstate changes, which say which domain runs on
each CPU). The record layout is xen/include/public/trace.h's:

  u32 header   bits 0-27 event, 28-30 extra words, 31 a TSC follows
  [u32 tsc_lo, u32 tsc_hi]
  u32 extra[n]

xentrace writes a TRC_TRACE_CPU_CHANGE record (extra: cpu, byte count) before
each stretch of one CPU's records; each CPU's records are in its own order.

Usage: xentrace_count.py FILE TSC_MHZ  ->  one line per domain that ran:
  dom=D trace_s=S lost_records=N count_hc_<name>=X ... count_pv_<entry>=Y ...
trace_s is the span of the records' time stamps (TSC_MHZ: Xen's, from `xl info`),
the window the counts belong to.
"""

import collections
import struct
import sys

TRC_TRACE_CPU_CHANGE = 0x0001F003
TRC_LOST_RECORDS = 0x0001F001
TRC_SCHED_RUNSTATE_CHANGE = 0x00021001  # old state << 8 and new state << 4 added
TRC_PV_HYPERCALL_V2 = 0x0020100D
TRC_PV_HYPERCALL_SUBCALL = 0x0020200E
TRC_64_FLAG = 0x100
RUNSTATE_RUNNING = 0
# PV entry events (TRC_PV_ENTRY + n), by n
PV_ENTRIES = {3: "trap", 4: "page_fault", 5: "forced_invalid_op", 6: "emulate_privop",
              7: "emulate_4gb", 8: "math_state_restore", 9: "paging_fixup",
              10: "gdt_ldt_mapping_fault", 11: "ptwr_emulation", 12: "ptwr_emulation"}
# __HYPERVISOR_* of xen/include/public/xen.h
HYPERCALLS = {0: "set_trap_table", 1: "mmu_update", 2: "set_gdt", 3: "stack_switch",
              4: "set_callbacks", 5: "fpu_taskswitch", 6: "sched_op_compat",
              7: "platform_op", 8: "set_debugreg", 9: "get_debugreg",
              10: "update_descriptor", 12: "memory_op", 13: "multicall",
              14: "update_va_mapping", 15: "set_timer_op", 16: "event_channel_op_compat",
              17: "xen_version", 18: "console_io", 19: "physdev_op_compat",
              20: "grant_table_op", 21: "vm_assist", 22: "update_va_mapping_otherdomain",
              23: "iret", 24: "vcpu_op", 25: "set_segment_base", 26: "mmuext_op",
              27: "xsm_op", 28: "nmi_op", 29: "sched_op", 30: "callback_op",
              32: "event_channel_op", 33: "physdev_op", 34: "hvm_op", 35: "sysctl",
              36: "domctl", 37: "kexec_op", 41: "dm_op", 42: "hypfs_op"}
DOMID_IDLE = 0x7FFF


def records(data):
    """(cpu, event, extra words, TSC or None) for every record, in file order."""
    at, cpu = 0, None
    while at + 4 <= len(data):
        (header,) = struct.unpack_from("<I", data, at)
        event, n, has_tsc = header & 0x0FFFFFFF, (header >> 28) & 7, header >> 31
        tsc = None
        if has_tsc and at + 12 <= len(data):
            lo, hi = struct.unpack_from("<II", data, at + 4)
            tsc = lo | hi << 32
        at += 4 + 8 * has_tsc
        if at + 4 * n > len(data):
            return  # a record cut off at the end of the file
        extra = struct.unpack_from("<%dI" % n, data, at)
        at += 4 * n
        if event == TRC_TRACE_CPU_CHANGE and n >= 1:
            cpu = extra[0]
            continue
        yield cpu, event, extra, tsc


def classify(event, extra):
    """The counter a record adds to, or None."""
    base = event & ~TRC_64_FLAG
    if base == TRC_PV_HYPERCALL_V2 and extra:
        op = extra[0] & 0x000FFFFF
        return "hc_" + HYPERCALLS.get(op, "op%d" % op)
    if base == TRC_PV_HYPERCALL_SUBCALL and extra:
        op = extra[0] & 0x000FFFFF
        return "sub_" + HYPERCALLS.get(op, "op%d" % op)
    if base & 0xFFFFF000 == 0x00201000 and (base & 0xFFF) in PV_ENTRIES:
        return "pv_" + PV_ENTRIES[base & 0xFFF]
    return None


class Window:
    """What a trace holds: counts per domain, lost records, the TSC span."""

    def __init__(self):
        self.per_dom = collections.defaultdict(collections.Counter)
        self.lost = 0
        self.tsc_first = None
        self.tsc_last = None

    def seconds(self, tsc_mhz):
        if self.tsc_first is None or tsc_mhz <= 0:
            return 0.0
        return (self.tsc_last - self.tsc_first) / (tsc_mhz * 1e6)


def count(data):
    """The Window of a trace."""
    running = {}  # cpu -> domid running there
    w = Window()
    per_dom = w.per_dom
    for cpu, event, extra, tsc in records(data):
        if tsc is not None:
            w.tsc_first = tsc if w.tsc_first is None else min(w.tsc_first, tsc)
            w.tsc_last = tsc if w.tsc_last is None else max(w.tsc_last, tsc)
        if event == TRC_LOST_RECORDS:
            w.lost += 1
        elif event & ~0xFF0 == TRC_SCHED_RUNSTATE_CHANGE and len(extra) >= 1:
            if (event >> 4) & 0xF == RUNSTATE_RUNNING:
                running[cpu] = extra[0] >> 16
        else:
            what = classify(event, extra)
            dom = running.get(cpu)
            if what and dom is not None and dom != DOMID_IDLE:
                per_dom[dom][what] += 1
    return w


def lines(window, tsc_mhz):
    out = []
    for dom in sorted(window.per_dom):
        words = ["dom=%d" % dom, "trace_s=%.3f" % window.seconds(tsc_mhz),
                 "lost_records=%d" % window.lost]
        for k in sorted(window.per_dom[dom]):
            words.append("count_%s=%d" % (k, window.per_dom[dom][k]))
        out.append(" ".join(words))
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        window = count(f.read())
    for line in lines(window, float(argv[2])):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
