#!/usr/bin/env python3
"""The report of the lab's `compare` scenario (tests/lab/compare.sh): reads the
"LAB-RESULT scenario=compare sample ..." lines of a boot's console log and writes
OUT/compare.json, OUT/compare.md and OUT/compare.png.

Every figure is the median over the alternated rounds; every ratio is unetbackd ÷ the
kernel netback paired per round (same round, same queues, same test), then the median
of those ratios, with their spread (min-max). Bulk tests also get the dom0 CPU seconds
per GB moved (dom0's busy time during the run / bytes received). The targets of the
real-Xen speed work are evaluated on the medians (docs/lab.md, "compare").

Usage: compare_report.py LOG OUT_DIR [--meta key=value ...]
  --meta: what only the host knows (tcg=single|multi, host_load_start=..., ...)
"""

import json
import pathlib
import statistics
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchkit"))
import charts  # noqa: E402

TESTS = ["tcp_to_guest", "tcp_from_guest", "tcp_rr", "udp_pp", "g2g_tcp", "g2g_udp_pp"]
BULK = {"tcp_to_guest", "tcp_from_guest", "g2g_tcp"}
LABEL = {"tcp_to_guest": "TCP bulk to the guest", "tcp_from_guest": "TCP bulk from the guest",
         "tcp_rr": "TCP request/response", "udp_pp": "UDP ping-pong",
         "g2g_tcp": "TCP bulk guest to guest", "g2g_udp_pp": "UDP ping-pong guest to guest"}
UNIT = {"mbps": "Mbit/s", "us": "µs"}
KERNEL = "netback"
# Targets (issue #15): bulk ratio >= BULK_MIN (TCG single: BULK_MIN_SINGLE), latency ratio
# <= LATENCY_MAX, 2 queues >= SCALING_MIN x 1 queue, CPU per GB <= CPU_MAX x the kernel's.
BULK_MIN, BULK_MIN_SINGLE, LATENCY_MAX, SCALING_MIN, CPU_MAX = 1.0, 0.9, 1.0, 0.97, 1.2


def parse_words(line):
    """key=value words of a LAB-RESULT line (bare words are ignored)."""
    out = {}
    for w in line.split():
        if "=" in w:
            k, v = w.split("=", 1)
            out[k] = v
    return out


def number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def read_samples(lines):
    """The sample lines of the compare scenario, and its meta line."""
    samples, meta = [], {}
    for line in lines:
        line = line.strip()
        if not line.startswith("LAB-RESULT scenario=compare "):
            continue
        kind = line.split()[2]
        w = parse_words(line)
        if kind == "meta":
            meta = {k: v for k, v in w.items() if k != "scenario"}
        elif kind == "sample":
            s = {"round": int(w["round"]), "backend": w["backend"], "q": int(w["q"]),
                 "test": w["test"], "value": number(w["value"]), "unit": w.get("unit", "")}
            for k in ("bytes", "secs", "dom0_busy_s", "dom0_steal_s", "dom0_softirq_s",
                      "backend_s"):
                if k in w:
                    s[k] = number(w[k])
            if s["value"] is not None:
                samples.append(s)
    return samples, meta


def cpu_per_gb(s):
    """dom0 CPU seconds per GB received in a bulk sample (None when not measurable)."""
    if s["test"] not in BULK or not s.get("bytes") or s.get("dom0_busy_s") is None:
        return None
    return s["dom0_busy_s"] / (s["bytes"] / 1e9)


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def aggregate(samples):
    """Per (backend, q, test): value and CPU-per-GB medians over the rounds."""
    groups = {}
    for s in samples:
        groups.setdefault((s["backend"], s["q"], s["test"]), []).append(s)
    rows = {}
    for key, ss in groups.items():
        rows[key] = {"backend": key[0], "q": key[1], "test": key[2], "unit": ss[0]["unit"],
                     "value": spread([s["value"] for s in ss]),
                     "cpu_s_per_gb": spread([cpu_per_gb(s) for s in ss]),
                     "rounds": sorted(s["round"] for s in ss)}
    return rows


def paired_ratios(samples, backend, q, test, metric):
    """metric(backend) / metric(kernel) per round where both were measured."""
    by_round = {}
    for s in samples:
        if s["q"] == q and s["test"] == test and s["backend"] in (backend, KERNEL):
            v = s["value"] if metric == "value" else cpu_per_gb(s)
            by_round.setdefault(s["round"], {})[s["backend"]] = v
    out = []
    for r in sorted(by_round):
        a, b = by_round[r].get(KERNEL), by_round[r].get(backend)
        if a and b is not None:
            out.append(b / a)
    return out


def speed(test, ratio):
    """A ratio as 'times as fast' (> 1 better): latency ratios are inverted."""
    if ratio is None or ratio == 0:
        return None
    return ratio if test in BULK else 1 / ratio


def comparisons(samples, rows):
    out = []
    for backend in sorted({k[0] for k in rows if k[0] != KERNEL}):
        for (b, q, test) in sorted(rows, key=lambda k: (k[1], TESTS.index(k[2])
                                                        if k[2] in TESTS else 99)):
            if b != backend:
                continue
            ratios = paired_ratios(samples, backend, q, test, "value")
            cpu = paired_ratios(samples, backend, q, test, "cpu") if test in BULK else []
            out.append({"backend": backend, "q": q, "test": test,
                        "ratio": spread(ratios), "cpu_ratio": spread(cpu)})
    return out


def scaling(rows):
    """Per unetbackd backend and test: median at the largest queue count ÷ at 1 queue,
    as 'times as fast'."""
    out = []
    backends = sorted({k[0] for k in rows if k[0] != KERNEL})
    for backend in [KERNEL] + backends:
        qs = sorted({k[1] for k in rows if k[0] == backend})
        if len(qs) < 2 or qs[0] != 1:
            continue
        for test in TESTS:
            one, many = rows.get((backend, 1, test)), rows.get((backend, qs[-1], test))
            if not one or not many or not one["value"] or not many["value"]:
                continue
            ratio = many["value"]["median"] / one["value"]["median"]
            out.append({"backend": backend, "test": test, "q": qs[-1],
                        "speedup": speed(test, ratio)})
    return out


def targets(comp, scal, tcg):
    """Each target of the speed work as met / missed, for every unetbackd backend."""
    bulk_min = BULK_MIN_SINGLE if tcg == "single" else BULK_MIN
    out = []
    for c in comp:
        r = c["ratio"]["median"] if c["ratio"] else None
        if r is None:
            continue
        if c["test"] in BULK:
            out.append({"backend": c["backend"], "what": f"{c['test']} q={c['q']} ÷ kernel",
                        "value": r, "target": f">= {bulk_min}", "met": r >= bulk_min})
            cr = c["cpu_ratio"]["median"] if c["cpu_ratio"] else None
            if cr is not None:
                out.append({"backend": c["backend"], "what": f"{c['test']} q={c['q']} CPU/GB "
                            "÷ kernel", "value": cr, "target": f"<= {CPU_MAX}",
                            "met": cr <= CPU_MAX})
        else:
            out.append({"backend": c["backend"], "what": f"{c['test']} q={c['q']} latency "
                        "÷ kernel", "value": r, "target": f"<= {LATENCY_MAX}",
                        "met": r <= LATENCY_MAX})
    for s in scal:
        if s["backend"] == KERNEL or s["speedup"] is None:
            continue
        out.append({"backend": s["backend"], "what": f"{s['test']} q={s['q']} ÷ q=1 (speed)",
                    "value": s["speedup"], "target": f">= {SCALING_MIN}",
                    "met": s["speedup"] >= SCALING_MIN})
    return out


def fmt(v, digits=3):
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.{digits}g}"


def fmt_spread(s, digits=3):
    if not s:
        return "–"
    if s["n"] == 1:
        return fmt(s["median"], digits)
    return f"{fmt(s['median'], digits)} ({fmt(s['min'], digits)}–{fmt(s['max'], digits)})"


def markdown(doc):
    m = doc["meta"]
    lines = ["# Lab compare: kernel netback vs unetbackd, same boot", ""]
    done = {}  # backend -> rounds with samples
    for s in doc["samples"]:
        done.setdefault(s["backend"], set()).add(s["round"])
    planned = m.get("rounds", "?")
    rounds = f"{planned} alternated rounds"
    if any(str(len(r)) != str(planned) for r in done.values()):  # cut short: say what ran
        rounds = (f"{planned} alternated rounds planned, measured in "
                  + ", ".join(f"{b} {len(r)}" for b, r in done.items()))
    lines.append(f"TCG {m.get('tcg', '?')}, host load {m.get('host_load_start', '?')} → "
                 f"{m.get('host_load_end', '?')}, {rounds} "
                 f"({m.get('backends', '?')}), iperf3 {m.get('secs', '?')} s, sockperf "
                 f"{m.get('rr_secs', '?')} s. Medians over the rounds (min–max); ratio = "
                 "unetbackd ÷ kernel paired per round (bulk: > 1 is faster; latency and "
                 "CPU: < 1 is better).")
    lines.append("")
    rows = {tuple(r["key"]): r for r in doc["rows"]}
    lines.append("| test | q | backend | median | ratio to kernel | dom0 CPU s/GB | CPU ratio |")
    lines.append("|---|---|---|---|---|---|---|")
    comp = {(c["backend"], c["q"], c["test"]): c for c in doc["comparisons"]}
    for (b, q, test) in sorted(rows, key=lambda k: (TESTS.index(k[2]) if k[2] in TESTS else 99,
                                                    k[1], k[0] != KERNEL, k[0])):
        r = rows[(b, q, test)]
        c = comp.get((b, q, test), {})
        unit = UNIT.get(r["unit"], r["unit"])
        lines.append(f"| {LABEL.get(test, test)} | {q} | {b} | {fmt_spread(r['value'])} {unit} "
                     f"| {fmt_spread(c.get('ratio'))} | {fmt_spread(r['cpu_s_per_gb'])} "
                     f"| {fmt_spread(c.get('cpu_ratio'))} |")
    if doc["scaling"]:
        lines += ["", "Queues: median at the most queues ÷ at 1 queue, as times as fast:", "",
                  "| backend | test | queues | speed-up |", "|---|---|---|---|"]
        for s in doc["scaling"]:
            lines.append(f"| {s['backend']} | {LABEL.get(s['test'], s['test'])} | {s['q']} "
                         f"| {fmt(s['speedup'])} |")
    if doc["targets"]:
        met = sum(1 for t in doc["targets"] if t["met"])
        lines += ["", f"Targets: {met} of {len(doc['targets'])} met.", "",
                  "| backend | what | value | target | |", "|---|---|---|---|---|"]
        for t in doc["targets"]:
            lines.append(f"| {t['backend']} | {t['what']} | {fmt(t['value'])} | {t['target']} "
                         f"| {'met' if t['met'] else 'MISSED'} |")
    return "\n".join(lines) + "\n"


def plot(out, doc):
    """compare.png: every comparison as 'times as fast as the kernel netback'."""
    comp = [c for c in doc["comparisons"] if c["ratio"]]
    if not comp:
        return
    backends = sorted({c["backend"] for c in comp})
    keys = sorted({(c["q"], c["test"]) for c in comp},
                  key=lambda k: (TESTS.index(k[1]) if k[1] in TESTS else 99, k[0]))
    by = {(c["backend"], c["q"], c["test"]): speed(c["test"], c["ratio"]["median"])
          for c in comp}
    dat = out / "compare.dat"
    with dat.open("w") as f:
        f.write("config " + " ".join(f'"{b}"' for b in backends) + "\n")
        for q, test in keys:
            vals = [by.get((b, q, test)) for b in backends]
            f.write(f'"{test} q{q}" ' + " ".join("NaN" if v is None else f"{v:.4g}"
                                                 for v in vals) + "\n")
    title = (f"times as fast as the kernel netback (latency inverted; TCG "
             f"{doc['meta'].get('tcg', '?')}, medians of paired rounds)")
    charts.render(charts.histogram(out / "compare.png", dat, title, len(backends),
                                   unity_line=True), "compare_report.py")


def report(lines, meta):
    samples, scenario_meta = read_samples(lines)
    rows = aggregate(samples)
    comp = comparisons(samples, rows)
    scal = scaling(rows)
    m = dict(scenario_meta)
    m.update(meta)
    return {"meta": m, "samples": samples,
            "rows": [dict(v, key=list(k)) for k, v in sorted(rows.items())],
            "comparisons": comp, "scaling": scal, "targets": targets(comp, scal, m.get("tcg"))}


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    log, out = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    meta = {}
    rest = argv[3:]
    if rest and rest[0] == "--meta":
        meta = parse_words(" ".join(rest[1:]))
    lines = log.read_text(errors="replace").replace("\r", "").splitlines()
    doc = report(lines, meta)
    if not doc["samples"]:
        print(f"compare_report.py: no compare samples in {log}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.json").write_text(json.dumps(doc, indent=1) + "\n")
    (out / "compare.md").write_text(markdown(doc))
    plot(out, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
