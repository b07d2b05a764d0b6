#!/usr/bin/env python3
"""Small parsers the lab scenarios run inside dom0 (installed as /lab/labtool.py).

Each subcommand reads a tool's output and prints key=value words (or plain values) for
the shell scenarios; errors go to stderr with a non-zero exit. Unit-tested on the host
by tests/lab/labtool_test.py.

  labtool.py iperf FILE           iperf3 -J output: "MBPS BYTES SECONDS" as received
  labtool.py sockperf FILE        sockperf ping-pong output: the average latency in us
  labtool.py queue-counters [K..] `unetbackctl stats --json` on stdin: one line per
                                  queue, "vif=V queue=N k=v ..." for the keys K
  labtool.py account UNITS KP SC  `perf stat -x,` CSV files: every counter divided by
                                  UNITS, "per_unit_<event>=X ..." (one line)
  labtool.py perf-top N           `perf report --stdio --sort comm,sym` on stdin: the
                                  first N entries, "rank=R pct=P comm=C sym=S"
"""

import json
import re
import sys

DEFAULT_COUNTERS = ["rx_packets", "rx_slots", "tx_packets", "notify_sent", "events_received",
                    "spurious_events", "event_storm_backoffs", "rx_stalls", "grant_copy_calls",
                    "grant_copy_segments", "poll_spins", "poll_hits", "poll_us",
                    "poll_refused_steal", "poll_refused_budget"]


def iperf_summary(doc):
    """(Mbit/s, bytes, seconds) received, from iperf3's JSON; ValueError on an error."""
    if "error" in doc:
        raise ValueError(doc["error"])
    rcv = doc["end"]["sum_received"]
    return rcv["bits_per_second"] / 1e6, int(rcv["bytes"]), float(rcv["seconds"])


def sockperf_avg_us(text):
    """The last avg-latency=... figure of sockperf's summary (microseconds)."""
    found = re.findall(r"avg-latency=([0-9.]+)", text)
    if not found:
        raise ValueError("no avg-latency in sockperf's output")
    return float(found[-1])


def stats_vifs(doc):
    """The vifs of a `unetbackctl stats --json` answer (a list, or {"vifs": [...]})."""
    if isinstance(doc, dict):
        doc = doc.get("result", doc)
    if isinstance(doc, list):
        return doc
    return doc.get("vifs", [doc])


def queue_counter_lines(doc, keys):
    lines = []
    for v in stats_vifs(doc):
        for q in v.get("queues", []):
            c = q.get("counters", q)
            words = " ".join("%s=%s" % (k, c.get(k, "-")) for k in keys)
            lines.append("vif=%s queue=%s %s" % (v.get("name", "-"), q.get("queue"), words))
    return lines


def perf_stat_counts(text):
    """{event: count} from `perf stat -x,` output (comment lines and
    '<not counted>' entries skipped). The event name loses its group prefix
    (kprobes:acct_x -> acct_x, syscalls:sys_enter_read -> sys_enter_read)."""
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split(",")
        if len(f) < 3:
            continue
        try:
            value = float(f[0])
        except ValueError:
            continue
        out[f[2].split(":")[-1]] = out.get(f[2].split(":")[-1], 0) + value
    return out


def account_words(units, *csv_texts):
    counts = {}
    for t in csv_texts:
        for k, v in perf_stat_counts(t).items():
            counts[k] = counts.get(k, 0) + v
    if units <= 0:
        raise ValueError("no units to divide by")
    words = ["units=%g" % units]
    for k in sorted(counts):
        name = k[len("acct_"):] if k.startswith("acct_") else k
        words.append("per_unit_%s=%.4g" % (name, counts[k] / units))
    return " ".join(words)


def perf_top(text, n):
    """The first n entries of `perf report --stdio --sort comm,sym`."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[[k.]\]\s+(.+?)\s*$", line)
        if m:
            rows.append("rank=%d pct=%s comm=%s sym=%s" % (len(rows) + 1, m.group(1), m.group(2),
                                                            m.group(3).replace(" ", "_")))
        if len(rows) >= n:
            break
    return rows


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == "iperf":
            with open(args[0]) as f:
                mbps, nbytes, secs = iperf_summary(json.load(f))
            print("%.0f %d %.2f" % (mbps, nbytes, secs))
        elif cmd == "sockperf":
            with open(args[0]) as f:
                print("%.1f" % sockperf_avg_us(f.read()))
        elif cmd == "account":
            texts = []
            for path in args[1:]:
                with open(path) as f:
                    texts.append(f.read())
            print(account_words(float(args[0]), *texts))
        elif cmd == "perf-top":
            for row in perf_top(sys.stdin.read(), int(args[0])):
                print(row)
        elif cmd == "queue-counters":
            for line in queue_counter_lines(json.load(sys.stdin), args or DEFAULT_COUNTERS):
                print(line)
        else:
            print("labtool.py: unknown command %s" % cmd, file=sys.stderr)
            return 2
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print("labtool.py %s: %s" % (cmd, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
