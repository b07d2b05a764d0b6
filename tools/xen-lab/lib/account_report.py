#!/usr/bin/env python3
"""The report of the lab's `account` scenario (tests/lab/account.sh): reads its
"LAB-RESULT scenario=account account ...", "... profile ..." and "... hypervisor ..."
lines from a boot's console log and writes OUT/account.json and OUT/account.md: per
test, every counter per MB received (bulk) or per transaction (ping-pong) for each
backend side by side, what Xen did for dom0 and for the guests (with lab.xentrace=1),
and the top of each backend's profile.

Usage: account_report.py LOG OUT_DIR [--meta key=value ...]
"""

import json
import pathlib
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from compare_report import number, parse_words  # noqa: E402

LABEL = {"tcp_to_guest": "TCP bulk to the guest", "tcp_from_guest": "TCP bulk from the guest",
         "udp_pp": "UDP ping-pong", "g2g_tcp": "TCP bulk guest to guest",
         "g2g_udp_pp": "UDP ping-pong guest to guest"}
# What each counter stands for (tests/lab/account.sh).
MEANING = {
    "dom0_busy": "dom0 CPU (ms)",
    "backend_ctxsw": "context switches of the backend's threads",
    "sys_enter": "system calls of the backend's threads, all",
    "sys_enter_ioctl": "  ioctl (grant copy, event-channel notify)",
    "sys_enter_read": "  read (TAP frames, events)",
    "sys_enter_write": "  write (event-channel unmask)",
    "sys_enter_writev": "  writev (TAP frames)",
    "sys_enter_poll": "  poll (sleeps, busy-poll looks)",
    "sys_enter_clock_gettime": "  clock_gettime (no vDSO clock on this dom0)",
    "gnttab_batch_copy": "GNTTABOP_copy hypercalls",
    "pin_user_pages_fast": "pages pinned for grant copies (gntdev)",
    "gnttab_map_refs": "grant-map hypercalls (netback TX)",
    "gnttab_unmap_refs": "grant-unmap hypercalls (netback TX)",
    "notify_remote_via_irq": "kernel kicks of the guest (netback)",
    "evtchn_interrupt": "events delivered to userspace ports",
    "xen_irq_lateeoi": "event re-enables (EOI)",
    "tun_net_xmit": "frames the host put into the TAP",
    "tun_chr_read_iter": "TAP reads (including empty ones)",
    "tun_get_user": "frames written to the TAP",
}


def read_hypervisor(w):
    """A "hypervisor" line (tests/lab/account.sh, tools/xen-lab/dom0/xentrace_count.py):
    what Xen did for one domain in a traced window of trace_s seconds while the load
    ran at `rate` units per second; the guests' domains are summed under "guests"."""
    side = "dom0" if w.get("dom") == "0" else "guests"
    counts = {k[len("count_"):]: number(v) for k, v in w.items() if k.startswith("count_")}
    return {"backend": w["backend"], "test": w["test"], "side": side, "counts": counts,
            "rate": number(w.get("rate", 0)), "trace_s": number(w.get("trace_s", 0)),
            "lost_records": int(w.get("lost_records", 0))}


def merge_hypervisor(rows):
    """One row per (backend, test, side), the guests' domains added up, with per_unit:
    each count less what the idle pass (test "idle") saw in as long a window, divided
    by the units the window held (rate x trace_s)."""
    merged = {}
    for r in rows:
        key = (r["backend"], r["test"], r["side"])
        m = merged.setdefault(key, {**r, "counts": {}})
        for k, v in r["counts"].items():
            m["counts"][k] = m["counts"].get(k, 0) + v
    idle = {side: {k: v / m["trace_s"] for k, v in m["counts"].items()}
            for (_, test, side), m in merged.items() if test == "idle" and m["trace_s"] > 0}
    out = []
    for (_, test, side), m in merged.items():
        units = m["rate"] * m["trace_s"]
        if test == "idle" or units <= 0:
            continue
        background = idle.get(side, {})
        m["per_unit"] = {k: (v - background.get(k, 0) * m["trace_s"]) / units
                         for k, v in m["counts"].items()}
        m["idle_subtracted"] = bool(background)
        out.append(m)
    return out


def read(lines):
    accounts, profiles, hypervisor = [], [], []
    for line in lines:
        line = line.strip()
        if not line.startswith("LAB-RESULT scenario=account "):
            continue
        kind = line.split()[2]
        w = parse_words(line)
        if kind == "account":
            units = number(w.get("units"))
            if not units:
                continue
            row = {"backend": w["backend"], "test": w["test"], "unit": w["unit"], "units": units}
            per = {k[len("per_unit_"):]: number(v) for k, v in w.items()
                   if k.startswith("per_unit_")}
            per["dom0_busy"] = number(w.get("dom0_busy_s", 0)) * 1000 / units
            per["backend_ctxsw"] = number(w.get("backend_ctxsw", 0)) / units
            row["per_unit"] = per
            accounts.append(row)
        elif kind == "profile":
            profiles.append({"backend": w["backend"], "test": w["test"],
                             "rank": int(w["rank"]), "pct": number(w["pct"]),
                             "comm": w["comm"], "sym": w["sym"]})
        elif kind == "hypervisor":
            hypervisor.append(read_hypervisor(w))
    return accounts, profiles, merge_hypervisor(hypervisor)


def fmt(v):
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def hypervisor_tables(rows, test, backends, floor=0.5):
    """Per side (dom0, guests): Xen's work per unit for each backend, the counters of at
    least `floor` per unit somewhere, largest first."""
    out = []
    for side in ("dom0", "guests"):
        by = {r["backend"]: r for r in rows if r["test"] == test and r["side"] == side}
        if not by:
            continue
        keys = {k for r in by.values() for k, v in r["per_unit"].items() if v >= floor}
        keys = sorted(keys, key=lambda k: -max(r["per_unit"].get(k, 0) for r in by.values()))
        lost = sum(r["lost_records"] for r in by.values())
        net = ", less the idle pass's rate" if all(r["idle_subtracted"] for r in by.values()) else ""
        out += [f"What Xen did for {side} (xentrace; hc = hypercall, sub = multicall entry, "
                f"pv = an entry Xen handled{net}; lost records: {lost}):", "",
                "| event | " + " | ".join(backends) + " |", "|---|" + "---|" * len(backends)]
        for k in keys:
            vals = [fmt(by[b]["per_unit"].get(k, 0)) if b in by else "–" for b in backends]
            out.append(f"| {k} | " + " | ".join(vals) + " |")
        out.append("")
    return out


def markdown(doc):
    m = doc["meta"]
    out = ["# Lab cost account: kernel netback vs unetbackd, same boot", "",
           f"TCG {m.get('tcg', '?')}, host load {m.get('host_load_start', '?')} → "
           f"{m.get('host_load_end', '?')}. Counts per MB received (bulk) or per "
           "transaction (ping-pong); kprobe counts are dom0-wide, system calls and context "
           "switches are the backend's own threads (netback: its vif kthreads; its NAPI "
           "work runs in softirq and makes no system calls).", ""]
    rows_all = doc["accounts"] + doc.get("hypervisor", [])
    tests = sorted({a["test"] for a in rows_all}, key=lambda t: list(LABEL).index(t)
                   if t in LABEL else 99)
    backends = sorted({a["backend"] for a in rows_all}, key=lambda b: b != "netback")
    for test in tests:
        rows = {a["backend"]: a for a in doc["accounts"] if a["test"] == test}
        unit = next((r["unit"] for r in rows.values()), "unit")
        out += [f"## {LABEL.get(test, test)} (per {unit})", "",
                "| counter | " + " | ".join(backends) + " |",
                "|---|" + "---|" * len(backends)]
        keys = [k for k in MEANING if any(k in r["per_unit"] for r in rows.values())]
        for k in keys:
            vals = [fmt(rows[b]["per_unit"].get(k)) if b in rows else "–" for b in backends]
            out.append(f"| {MEANING[k]} | " + " | ".join(vals) + " |")
        out.append("")
        out += hypervisor_tables(doc.get("hypervisor", []), test, backends)
        for b in backends:
            top = [p for p in doc["profiles"] if p["backend"] == b and p["test"] == test]
            if top:
                out.append(f"Profile, {b}: " + "; ".join(
                    f"{p['pct']:.1f}% {p['comm']} {p['sym']}" for p in top[:12]))
                out.append("")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    log, out = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    meta = parse_words(" ".join(argv[4:])) if len(argv) > 3 and argv[3] == "--meta" else {}
    accounts, profiles, hypervisor = read(
        log.read_text(errors="replace").replace("\r", "").splitlines())
    if not accounts:
        print(f"account_report.py: no account lines in {log}", file=sys.stderr)
        return 1
    doc = {"meta": meta, "accounts": accounts, "profiles": profiles, "hypervisor": hypervisor}
    out.mkdir(parents=True, exist_ok=True)
    (out / "account.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "account.md").write_text(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
