#!/usr/bin/env python3
"""Report of a tools/bench run: reads OUT/results.jsonl (one line per test and
round), OUT/meta.json and OUT/micro-*.json; writes OUT/results.json,
OUT/results.md and OUT/plots/*.png (gnuplot). Every unetback (and veth) figure
gets its ratio to baseline (a), tap-relay, measured in the same round with the
same queues, test and direction; with several rounds, figures and ratios are
medians (ratios paired per round, then the median). A --levers run (meta
"levers") gets the lever table instead: per lever, the same tests with the
lever on and off, and on / off paired per round.

Usage: report.py OUT_DIR
"""

import json
import pathlib
import statistics
import sys

import charts

PRIMARY = {"TCP_STREAM": "gbps", "UDP_STREAM": "rx_kpps", "TCP_RR": "tps", "UDP_RR": "tps",
           "IDLE": "idle_cpu_pct"}
UNITS = {"gbps": "Gbit/s", "rx_kpps": "kpps received", "tps": "transactions/s",
         "idle_cpu_pct": "% of a core, idle"}
TEST_ORDER = ["TCP_STREAM", "UDP_STREAM", "TCP_RR", "UDP_RR", "IDLE"]
# Issue #9's targets (docs/performance.md, Targets): thresholds used by targets().
SCALING_MIN = 0.97        # every test at N queues >= this x the same test at 1 queue
RELAY_MIN = 0.8           # unetback >= this x (a) for 64 B frames and 64 KiB GSO
PPS_PER_QUEUE_MIN = 1000  # kpps of 64-byte guest TX per queue
IDLE_CPU_MAX = 0.0        # % of a core with poll-us 0 (reported to 0.01 %)
RSS_PER_QUEUE_MAX = 4096  # KiB
DIR_LABEL = {"guest_tx": "guest→host", "guest_rx": "host→guest", "g2g": "guest→guest"}
DIR_SHORT = {"guest_tx": "tx", "guest_rx": "rx", "g2g": "g2g"}  # chart labels


def load(out):
    rows = [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines() if l.strip()]
    meta_path = out / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    micro = []
    for f in sorted(out.glob("micro-*.json")):
        micro.extend(json.loads(f.read_text()).get("benchmarks", []))
    return rows, meta, micro


def key(r):
    return (r["test"], r["variant"], r["direction"], r["queues"])


def primary(r):
    if not r.get("ok") or not r.get("metrics"):
        return None
    return r["metrics"].get(PRIMARY[r["test"]])


def add_ratios(rows):
    """ratio_to_relay on every unetback/veth row: each metric / the relay's same
    metric in the same round."""
    relay = {(key(r), r.get("round", 1)): r for r in rows if r["path"] == "relay" and r.get("ok")}
    for r in rows:
        base = relay.get((key(r), r.get("round", 1)))
        if r["path"] == "relay" or not r.get("ok") or base is None:
            continue
        r["ratio_to_relay"] = {
            m: (v / base["metrics"][m]) if base["metrics"].get(m) else None
            for m, v in r["metrics"].items() if isinstance(v, (int, float))}


def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def aggregate(rows):
    """One row per (test, variant, direction, queues, path, poll_us): medians over rounds."""
    groups = {}
    for r in rows:
        groups.setdefault((key(r), r["path"], r["poll_us"], r.get("config", "base")), []).append(r)
    out = []
    for runs in groups.values():
        ok = [r for r in runs if r.get("ok")]
        first = runs[0]
        agg = {f: first[f] for f in ("path", "queues", "poll_us", "test", "variant", "direction",
                                     "seconds")}
        agg["config"] = first.get("config", "base")
        agg.update(ok=bool(ok), rounds=len(runs), rounds_ok=len(ok),
                   datapath_cpu_pct=median_of([r.get("datapath_cpu_pct") for r in ok]))
        agg["values"] = [primary(r) for r in runs]
        agg["metrics"] = {m: median_of([r["metrics"].get(m) for r in ok])
                          for m in (ok[0]["metrics"] if ok else {})}
        ratios = [r["ratio_to_relay"] for r in ok if r.get("ratio_to_relay")]
        if ratios:
            agg["ratio_to_relay"] = {m: median_of([x.get(m) for x in ratios]) for m in ratios[0]}
        errors = sorted({r["error"] for r in runs if r.get("error")})
        if errors:
            agg["errors"] = errors
        out.append(agg)
    return out


# Configurations of unetbackd shown as columns of their own: the defaults, and
# the direct path between two guests (--g2g); the lever settings have their table.
COLUMN_CONFIGS = ("base", "direct")


def config_of(r):
    return r.get("config", "base")


def cell_key(r):
    """What a table cell is looked up by: the test key, then the column's (path, poll, config)."""
    return (key(r), r["path"], r["poll_us"], config_of(r))


def columns(rows):
    """(label, path, poll_us, config) for every column present, baselines first."""
    cols = [("(a) tap-relay", "relay", 0, "base"), ("(b) veth", "veth", 0, "base")]
    cols = [c for c in cols if any(r["path"] == c[1] for r in rows)]
    combos = sorted({(config_of(r), r["poll_us"]) for r in rows
                     if r["path"] == "unetback" and config_of(r) in COLUMN_CONFIGS},
                    key=lambda c: (COLUMN_CONFIGS.index(c[0]), c[1]))
    for config, p in combos:
        label = "unetback" + (f" poll-us {p}" if p else "") + (
            f" {config}" if config != "base" else "")
        cols.append((label, "unetback", p, config))
    return cols


def fmt_num(v):
    if v is None:
        return "–"
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def cell(r):
    if r is None:
        return ""
    if not r.get("ok"):
        return "failed"
    m = r["metrics"]
    text = fmt_num(primary(r))
    if r["test"] == "UDP_STREAM":
        text += f" ({m['loss_pct']:.1f}% loss)"
    elif r["test"] == "IDLE" and m.get("rss_kib") is not None:
        text += (f" (RSS {m['rss_kib'] / 1024:.1f} MiB, {m['rss_per_queue_kib'] / 1024:.2f}"
                 f" MiB/queue; {fmt_num(m['wakeups_per_s'])} wake-ups/s)")
    elif r["test"].endswith("_RR"):
        text += f" (p50 {fmt_num(m['p50_us'])} / p99 {fmt_num(m['p99_us'])} µs)"
    if r.get("ratio_to_relay"):
        ratio = r["ratio_to_relay"].get(PRIMARY[r["test"]])
        if ratio is not None:
            text += f" **{ratio:.2f}×**" if r["path"] == "unetback" else f" _{ratio:.2f}×_"
    return text


def sorted_keys(rows):
    keys = {key(r) for r in rows}
    return sorted(keys, key=lambda k: (TEST_ORDER.index(k[0]) if k[0] in TEST_ORDER else 99,
                                       k[1], k[2] != "guest_tx", k[3]))


def markdown(rows, meta, micro):
    cols = columns(rows)
    index = {cell_key(r): r for r in rows}
    lines = ["# unetback benchmark results", ""]
    if meta:
        lines += [f"- command: `{meta.get('command', '')}`",
                  f"- date: {meta.get('date', '')}; git {meta.get('git', '')}"
                  f" ({meta.get('uncommitted_files', 0)} uncommitted files)",
                  f"- machine: {meta.get('cpu', '')}, {meta.get('cpus', '')} CPUs,"
                  f" Linux {meta.get('kernel', '')}",
                  f"- {meta.get('seconds_per_test', '')} s per test,"
                  f" {meta.get('rounds', 1)} round(s) (medians);"
                  f" parallel streams: {meta.get('streams', '')}", ""]
    lines += ["Each unetback cell ends with its ratio to (a) tap-relay (same run, same round, "
              "same queues, same test) in bold; veth cells with theirs in italics. UDP: datagrams received per second (and loss); RR: "
              "transactions per second (round-trip p50 / p99). Directions are the guest's: "
              "guest→host is the guest transmitting.", ""]
    head = ["test", "variant", "direction", "queues", "unit"] + [c[0] for c in cols]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k in sorted_keys(rows):
        test, variant, direction, q = k
        vals = [cell(index.get((k, *c[1:]))) for c in cols]
        lines.append("| " + " | ".join([test, variant, DIR_LABEL.get(direction, direction), str(q),
                                        UNITS[PRIMARY[test]]] + vals) + " |")
    lines += ["", "Data-path CPU (% of one core, over each test): unetback = unetbackd + "
              "netfront-sim, (a) = tap-relay (veth: kernel only, not measured).", ""]
    cpu_cols = [c for c in cols if c[1] != "veth"]
    lines += ["| test | variant | direction | queues | " + " | ".join(c[0] for c in cpu_cols) + " |",
              "|" + "---|" * (4 + len(cpu_cols))]
    for k in sorted_keys(rows):
        vals = []
        for c in cpu_cols:
            r = index.get((k, *c[1:]))
            vals.append("" if r is None or r.get("datapath_cpu_pct") is None
                        else f"{r['datapath_cpu_pct']}%")
        lines.append("| " + " | ".join([k[0], k[1], DIR_LABEL.get(k[2], k[2]), str(k[3])] + vals)
                     + " |")
    if micro:
        lines += ["", "## Microbenchmarks (Google Benchmark)", "",
                  "items/s: packets (rings), segments (grant copy); packets/s (grant copy) ="
                  " whole packets copied.", "",
                  "| benchmark | ns/iteration (CPU) | items/s | packets/s | bytes/s |",
                  "|---|---|---|---|---|"]
        for b in micro:
            if b.get("run_type", "iteration") != "iteration":
                continue
            ips = b.get("items_per_second")
            bps = b.get("bytes_per_second")
            pps = b.get("packets")
            lines.append(f"| {b['name']} | {b['cpu_time']:.1f} | "
                         f"{'' if ips is None else f'{ips / 1e6:.2f} M'} | "
                         f"{'' if pps is None else f'{pps / 1e6:.3f} M'} | "
                         f"{'' if bps is None else f'{bps / 2**30:.2f} GiB'} |")
    lines += targets(rows)
    lines += ["", "Plots: plots/*.png. Raw: results.jsonl; per-world logs: logs/.", ""]
    return "\n".join(lines)


# --levers: (lever, queues, ON setting, what ON is, OFF setting, what OFF is). The
# settings are the "config" of tools/bench's lever worlds; base = the defaults.
LEVERS = [
    ("batching", 1, "base", "up to 64 TX requests / RX packets per sweep, one grant-copy call"
     " per sweep (default `--tx-batch 64 --rx-batch 64`)", "batch-1",
     "`--tx-batch 1 --rx-batch 1`"),
    ("notification suppression", 1, "base", "kick the frontend only when `rsp_event` asks"
     " (default)", "notify-always", "`--notify-always`: a kick after every sweep with responses"),
    ("busy poll", 1, "base", "adaptive window up to 500 µs (default `--poll-us 500`)", "poll-0",
     "`--poll-us 0`: sleep in poll() at once"),
    ("busy poll, 50 µs", 1, "poll-50", "adaptive window up to 50 µs (`--poll-us 50`)", "poll-0",
     "`--poll-us 0`"),
    ("spin budget", 1, "base", "spinning paid by the wake-ups it saves, within 50 % (default"
     " `--poll-budget-pct 50`)", "spin-free", "`--poll-budget-pct 100`: no spin limit"),
    ("GSO / checksum offload", 1, "base", "TSO4/TSO6 + CSUM on the TAPs, 64 KiB packets on the"
     " rings (default)", "no-gso", "netfront-sim `--no-gso` (no feature-gso-tcpv4/6; checksum"
     " offload stays)"),
    ("flow steering", 2, "base", "a flow stays on one queue (the guest TAP's flow steering;"
     " the vif TAP's flow table follows)", "spread", "netfront-sim `--tx-queue-select random`:"
     " every guest frame to a random queue"),
    ("thread placement", 2, "pinned", "queue worker q<N> pinned to CPU N (`taskset -p`)", "base",
     "placement left to the scheduler (default)"),
]
DETAIL_METRICS = [("p50_us", "p50 µs"), ("p99_us", "p99 µs"), ("loss_pct", "loss %"),
                  ("retransmits", "retransmits"), ("dp_notify_per_pkt", "kicks/pkt"),
                  ("dp_events_per_pkt", "events/pkt"), ("dp_copy_calls_per_pkt", "copy calls/pkt")]


def lever_rows(runs):
    """Per lever and test: medians of ON, OFF and (a), and ON / OFF paired per round."""
    by = {}
    for r in runs:
        if r.get("ok") and r.get("metrics"):
            by[(r["path"], r.get("config", "base"), r["queues"], r["test"], r["variant"],
                r["direction"], r.get("round", 1))] = r
    out = []
    for name, q, on_cfg, on_text, off_cfg, off_text in LEVERS:
        tests = sorted({(r["test"], r["variant"], r["direction"]) for r in runs
                        if r["path"] == "unetback" and r["queues"] == q
                        and r.get("config", "base") == off_cfg},
                       key=lambda t: (TEST_ORDER.index(t[0]), t[1], t[2] != "guest_tx"))
        for t in tests:
            rounds = sorted({k[6] for k in by if k[3:6] == t and k[2] == q})
            pairs = [(by.get(("unetback", on_cfg, q) + t + (rd,)),
                      by.get(("unetback", off_cfg, q) + t + (rd,)),
                      by.get(("relay", "base", q) + t + (rd,))) for rd in rounds]
            m = PRIMARY[t[0]]
            ratios = [on["metrics"][m] / off["metrics"][m] for on, off, _ in pairs
                      if on and off and on["metrics"].get(m) and off["metrics"].get(m)]
            row = {"lever": name, "queues": q, "on": on_cfg, "on_is": on_text, "off": off_cfg,
                   "off_is": off_text, "test": t[0], "variant": t[1], "direction": t[2],
                   "metric": m, "ratios": ratios, "ratio": median_of(ratios),
                   "relay": median_of([a["metrics"].get(m) for _, _, a in pairs if a])}
            for side, i in (("on", 0), ("off", 1)):
                got = [p[i] for p in pairs if p[i]]
                row[side + "_value"] = median_of([g["metrics"].get(m) for g in got])
                row[side + "_cpu"] = median_of([g.get("datapath_cpu_pct") for g in got])
                row[side + "_details"] = {k: median_of([g["metrics"].get(k) for g in got])
                                          for k, _ in DETAIL_METRICS}
            out.append(row)
    return out


def lever_markdown(rows, meta):
    lines = ["# unetback levers: measured on and off", ""]
    if meta:
        load = lambda k: " ".join(f"{v:.2f}" for v in meta.get(k, [])) or "?"
        lines += [f"- command: `{meta.get('command', '')}`",
                  f"- date: {meta.get('date', '')}; git {meta.get('git', '')}"
                  f" ({meta.get('uncommitted_files', 0)} uncommitted files)",
                  f"- machine: {meta.get('cpu', '')}, {meta.get('cpus', '')} CPUs,"
                  f" Linux {meta.get('kernel', '')}; load average (1/5/15 min) at start"
                  f" {load('loadavg_start')}, at end {load('loadavg_end')}",
                  f"- {meta.get('seconds_per_test', '')} s per test,"
                  f" {meta.get('rounds', 1)} round(s): medians; ON ÷ OFF paired per round"
                  " (the per-round ratios in brackets)", ""]
    lines += ["| lever | queues | ON | OFF |", "|---|---|---|---|"]
    seen = set()
    for r in rows:
        if r["lever"] not in seen:
            seen.add(r["lever"])
            lines.append(f"| {r['lever']} | {r['queues']} | {r['on_is']} | {r['off_is']} |")
    lines += ["", "| lever | test | direction | unit | (a) tap-relay | ON | OFF | ON ÷ OFF |"
              " CPU ON / OFF | details ON / OFF |", "|" + "---|" * 10]
    for r in rows:
        per_round = ", ".join(f"{x:.2f}" for x in r["ratios"])
        ratio = "–" if r["ratio"] is None else f"**{r['ratio']:.2f}×** ({per_round})"
        cpu = (f"{fmt_num(r['on_cpu'])}% / {fmt_num(r['off_cpu'])}%"
               if r["on_cpu"] is not None and r["off_cpu"] is not None else "")
        details = "; ".join(
            f"{label} {fmt_num(r['on_details'][k])} / {fmt_num(r['off_details'][k])}"
            for k, label in DETAIL_METRICS
            if r["on_details"][k] is not None or r["off_details"][k] is not None)
        lines.append(f"| {r['lever']} | {r['test']} {r['variant']} |"
                     f" {DIR_LABEL.get(r['direction'], r['direction'])} | {UNITS[r['metric']]} |"
                     f" {fmt_num(r['relay'])} | {fmt_num(r['on_value'])} |"
                     f" {fmt_num(r['off_value'])} | {ratio} | {cpu} | {details} |")
    lines += ["", "ON ÷ OFF above 1: the lever pays in that test (every unit here is"
              " higher-is-better). CPU: unetbackd + netfront-sim, % of one core. kicks/pkt:"
              " the daemon's `notify_sent` per packet it moved; events/pkt: `events_received`;"
              " copy calls/pkt: `grant_copy_calls`.", "",
              "Not switchable, so not in the table: preallocated buffer pools (the workers"
              " have no allocating variant) and io_uring for TAP I/O (there is no io_uring"
              " variant).", "", "Raw: results.jsonl; per-world logs: logs/.", ""]
    return "\n".join(lines)


def verdict(ok):
    return "–" if ok is None else ("met" if ok else "**missed**")


def scaling_rows(rows):
    """Every unetback test at N > 1 queues against the same test at 1 queue. The
    queue counts run minutes apart (each has its own worlds), so the verdict uses
    the same-run ratios: (unetback / (a) at N queues) / (unetback / (a) at 1 queue);
    the raw ratio of the two figures is shown too."""
    one = {(r["test"], r["variant"], r["direction"], r["poll_us"], config_of(r)): r for r in rows
           if r["path"] == "unetback" and r["queues"] == 1 and primary(r)}
    out = []
    for r in rows:
        base = one.get((r["test"], r["variant"], r["direction"], r["poll_us"], config_of(r)))
        if r["path"] != "unetback" or r["queues"] == 1 or base is None or primary(r) is None:
            continue
        if r["test"] == "IDLE":
            continue  # less is better there; its own targets below
        raw = primary(r) / primary(base)
        m = PRIMARY[r["test"]]
        here = (r.get("ratio_to_relay") or {}).get(m)
        there = (base.get("ratio_to_relay") or {}).get(m)
        paired = here / there if here is not None and there else None
        measured = f"raw {fmt_num(primary(r))} / {fmt_num(primary(base))} = {raw:.2f}×"
        if paired is not None:
            measured = f"**{paired:.2f}×** ({here:.2f} / {there:.2f}); " + measured
        out.append((f"{r['test']} {r['variant']} {DIR_LABEL.get(r['direction'], r['direction'])}"
                    f" poll-us {r['poll_us']}"
                    + (f" {config_of(r)}" if config_of(r) != "base" else "")
                    + f": q{r['queues']} / q1", measured, f">= {SCALING_MIN}",
                    (paired if paired is not None else raw) >= SCALING_MIN))
    return out


def relay_rows(rows):
    """unetback / (a) for 64-byte UDP and bulk TCP with GSO (64 KiB segments)."""
    out = []
    for r in rows:
        if r["path"] != "unetback" or not r.get("ratio_to_relay"):
            continue
        if not ((r["test"] == "UDP_STREAM" and r["variant"] == "64") or
                (r["test"] == "TCP_STREAM" and "-l" not in r["variant"])):
            continue
        ratio = r["ratio_to_relay"].get(PRIMARY[r["test"]])
        if ratio is None:
            continue
        out.append((f"{r['test']} {r['variant']} {DIR_LABEL.get(r['direction'], r['direction'])}"
                    f" q{r['queues']} poll-us {r['poll_us']}: unetback / (a)", f"{ratio:.2f}×",
                    f">= {RELAY_MIN}", ratio >= RELAY_MIN))
    return out


def resource_rows(rows):
    """64-byte guest TX per queue; idle CPU and RSS per queue (poll-us 0)."""
    out = []
    for r in rows:
        if r["path"] != "unetback" or not r.get("ok"):
            continue
        m = r["metrics"]
        where = f"q{r['queues']} poll-us {r['poll_us']}"
        if (r["test"], r["variant"], r["direction"]) == ("UDP_STREAM", "64", "guest_tx") and \
                m.get("dp_guest_tx_kpps_max_queue") is not None:
            v = m["dp_guest_tx_kpps_max_queue"]
            out.append((f"64 B guest TX, busiest queue ({where}), daemon counters",
                        f"{fmt_num(v)} kpps", f">= {PPS_PER_QUEUE_MIN} kpps",
                        v >= PPS_PER_QUEUE_MIN))
        if r["test"] == "IDLE" and m.get("rss_kib") is not None:
            if r["poll_us"] == 0:
                v = m["idle_cpu_pct"]
                out.append((f"idle CPU of unetbackd ({where}, {r['variant']} s)",
                            f"{v:.3f}% ({fmt_num(m['wakeups_per_s'])} wake-ups/s)", "0 %",
                            round(v, 2) <= IDLE_CPU_MAX))
            v = m["rss_per_queue_kib"]
            out.append((f"RSS per queue ({where}; {m['rss_kib'] / 1024:.1f} MiB total,"
                        f" {m['rss_base_kib'] / 1024:.1f} MiB before the vif)",
                        f"{v / 1024:.2f} MiB", "<= 4 MiB", v <= RSS_PER_QUEUE_MAX))
    return out


def targets(rows):
    """Issue #9's targets, met or missed, from this run's medians."""
    found = scaling_rows(rows) + relay_rows(rows) + resource_rows(rows)
    if not found:
        return []
    lines = ["", "## Targets (issue #9)", "",
             "Queue scaling: in bold (N queues ÷ 1 queue) of the same-run ratios to (a),"
             " which decides; then the raw ratio of the two figures, measured minutes apart.", "",
             "| target | measured | required | verdict |",
             "|---|---|---|---|"]
    lines += [f"| {name} | {value} | {need} | {verdict(ok)} |" for name, value, need, ok in found]
    return lines


def plot(out, rows):
    """One clustered bar chart per test (primary metric), and one of the ratios to (a)."""
    plots = out / "plots"
    plots.mkdir(exist_ok=True)
    cols = columns(rows)
    index = {cell_key(r): r for r in rows}
    scripts = []
    for test in TEST_ORDER:
        keys = [k for k in sorted_keys(rows) if k[0] == test]
        if not keys:
            continue
        if not any(primary(r) is not None for r in rows if r["test"] == test):
            continue
        dat = plots / f"{test}.dat"
        with dat.open("w") as f:
            f.write("config " + " ".join('"%s"' % c[0] for c in cols) + "\n")
            for k in keys:
                vals = [primary(index[(k, *c[1:])]) if (k, *c[1:]) in index else None
                        for c in cols]
                label = f"{k[1]} {DIR_SHORT.get(k[2], k[2])} q{k[3]}"
                f.write(f'"{label}" ' + " ".join("NaN" if v is None else f"{v:.6g}"
                                                  for v in vals) + "\n")
        scripts.append(charts.histogram(plots / f"{test}.png", dat, f"{test}: {UNITS[PRIMARY[test]]}",
                                 len(cols)))
    ratio_cols = [c for c in cols if c[1] == "unetback"]
    keys = sorted_keys(rows)
    if ratio_cols and any(r.get("ratio_to_relay") for r in rows if r["path"] == "unetback"):
        dat = plots / "ratio.dat"
        with dat.open("w") as f:
            f.write("config " + " ".join('"%s"' % c[0] for c in ratio_cols) + "\n")
            for k in keys:
                vals = []
                for c in ratio_cols:
                    r = index.get((k, *c[1:]))
                    ratio = (r or {}).get("ratio_to_relay", {}).get(PRIMARY[k[0]])
                    vals.append("NaN" if ratio is None else f"{ratio:.4g}")
                short = k[0].replace("_STREAM", "").replace("_RR", "-RR")
                label = f"{short} {k[1]} {DIR_SHORT.get(k[2], k[2])} q{k[3]}"
                f.write(f'"{label}" ' + " ".join(vals) + "\n")
        title = "unetback / (a) tap-relay (primary metric; 1 = as fast as tap-relay)"
        scripts.append(charts.histogram(plots / "ratio.png", dat, title, len(ratio_cols),
                                 unity_line=True))
    for s in scripts:
        charts.render(s, "report.py")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(sys.argv[1])
    runs, meta, micro = load(out)
    add_ratios(runs)
    rows = aggregate(runs)
    doc = {"meta": meta, "results": rows, "runs": runs, "micro": micro}
    if meta.get("levers"):
        doc["levers"] = lever_rows(runs)
        (out / "results.md").write_text(lever_markdown(doc["levers"], meta))
    else:
        (out / "results.md").write_text(markdown(rows, meta, micro))
        plot(out, rows)
    (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
