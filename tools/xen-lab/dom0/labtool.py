#!/usr/bin/env python3
"""Small parsers the lab scenarios run inside dom0 (installed as /lab/labtool.py).

Each subcommand reads a tool's output and prints key=value words (or plain values) for
the shell scenarios; errors go to stderr with a non-zero exit. Unit-tested on the host
by tests/lab/tools/lab_reports_test.py.

  labtool.py iperf FILE           iperf3 -J output: "MBPS BYTES SECONDS" as received
  labtool.py sockperf FILE        sockperf ping-pong output: the average latency in us
  labtool.py queue-counters [K..] `unetbackctl stats --json` on stdin: one line per
                                  queue, "vif=V queue=N k=v ..." for the keys K (and
                                  the direct path's counters where the vif has it)
  labtool.py account UNITS KP SC  `perf stat -x,` CSV files: every counter divided by
                                  UNITS, "per_unit_<event>=X ..." (one line)
  labtool.py perf-top N           `perf report --stdio --sort comm,sym` on stdin: the
                                  first N entries, "rank=R pct=P comm=C sym=S"
  labtool.py queue-counter-sum K  `unetbackctl stats --json` on stdin: counter K summed
                                  over every queue
  labtool.py queues-that-sent     the same on stdin: how many queues have tx_packets > 0
  labtool.py queues-moved A B     two `stats --json` files: per-queue tx/rx deltas; exit 1
                                  unless every queue's tx_packets and rx_packets grew
  labtool.py disconnect-counters N FILE
                                  the daemon's "counters at disconnect" JSON lines: the
                                  last connection's queues; exit 1 unless there are N
                                  (0: any number) and each carried tx and rx packets
  labtool.py vif-connected NAME Q FILE
                                  `unetbackctl list --json`: exit 1 unless NAME is
                                  Connected, not failed or disabled, with Q queues
  labtool.py attack-report        netfront-sim --attack's last stdout line on stdin:
                                  "tx_statuses=S,S.. backend_state=N exit=E kicks=K"
  labtool.py frontend-report      netfront-sim's last stdout line on stdin: its counters
                                  summed over the queues (tx_max_slots: the largest),
                                  "personality=P exit=E tx_packets=N ..."
  labtool.py iperf-restart FILE SINCE_MS
                                  iperf3 -J output across a restart: "iperf_mbps=M
                                  iperf_zero_ms=Z bytes_after_restart=B"
  labtool.py iperf-around FILE T0 T1
                                  iperf3 -J output: the intervals during [T0, T1) s and
                                  after it; exit 1 if no byte moved from T0 on
  labtool.py log-ms               one spdlog line on stdin: its time in epoch ms (local)
  labtool.py no-control-ring FILE `unetbackctl hash --json`: exit 0 when the vif has no
                                  control ring
"""

import json
import re
import sys
import time

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


DIRECT_COUNTERS = ["tx_packets", "rx_packets", "tx_drops_full"]


def direct_words(vif, queue):
    """The direct path's counters of one queue ("direct_tx_packets=N ..."), or "" for a
    vif without the direct path."""
    direct = vif.get("direct")
    if not direct:
        return ""
    counts = next((d for d in direct.get("queues", []) if d.get("queue") == queue), {})
    words = ["direct_%s=%s" % (k, counts.get(k, "-")) for k in DIRECT_COUNTERS]
    words.append("direct_peers=%s" % (",".join(direct.get("peers", [])) or "-"))
    return " " + " ".join(words)


def queue_counter_lines(doc, keys):
    lines = []
    for v in stats_vifs(doc):
        for q in v.get("queues", []):
            c = q.get("counters", q)
            words = " ".join("%s=%s" % (k, c.get(k, "-")) for k in keys)
            lines.append("vif=%s queue=%s %s%s" % (v.get("name", "-"), q.get("queue"), words,
                                                  direct_words(v, q.get("queue"))))
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


def queue_counters(doc):
    """Every queue's counters of a `stats --json` answer, as (vif name, queue, counters)."""
    return [(v.get("name"), q.get("queue"), q.get("counters", q))
            for v in stats_vifs(doc) for q in v.get("queues", [])]


def queue_counter_sum(doc, key):
    return sum(c.get(key, 0) for _, _, c in queue_counters(doc))


def queues_that_sent(doc):
    return sum(1 for _, _, c in queue_counters(doc) if c.get("tx_packets", 0) > 0)


def queues_moved(before, after):
    """(lines, ok): per-queue packet deltas; ok when every queue of `after` sent and
    received since `before`."""
    a = {(n, q): c for n, q, c in queue_counters(before)}
    b = {(n, q): c for n, q, c in queue_counters(after)}
    lines, ok = [], bool(b)
    for key in sorted(b, key=str):
        ca, cb = a.get(key, {}), b[key]
        dt = cb.get("tx_packets", 0) - ca.get("tx_packets", 0)
        dr = cb.get("rx_packets", 0) - ca.get("rx_packets", 0)
        lines.append("vif=%s queue=%s tx_packets_delta=%d rx_packets_delta=%d"
                     % (key[0], key[1], dt, dr))
        ok = ok and dt > 0 and dr > 0
    return lines, ok


def disconnect_counters(text, want):
    """(lines, ok) of the last connection in the daemon's "counters at disconnect"
    JSON lines (a connection starts again at queue 0); ok when it had `want` queues
    (0: any) and each carried tx and rx packets."""
    qs = {}
    for line in text.splitlines():
        try:
            c = json.loads(line)
        except ValueError:
            continue
        if c.get("queue") == 0:
            qs = {}
        qs[c.get("queue")] = c
    ok = bool(qs) and (want == 0 or len(qs) == want)
    lines = []
    for q in sorted(qs):
        c = qs[q]
        lines.append("queue=%d tx_packets=%d rx_packets=%d tx_bytes=%d rx_bytes=%d"
                     % (q, c.get("tx_packets", 0), c.get("rx_packets", 0),
                        c.get("tx_bytes", 0), c.get("rx_bytes", 0)))
        ok = ok and c.get("tx_packets", 0) > 0 and c.get("rx_packets", 0) > 0
    return lines, ok


def vif_connected(doc, name, queues):
    """(line, ok): the vif `name` of `unetbackctl list --json` is Connected, not failed
    or disabled, and serves `queues` queues."""
    v = [x for x in stats_vifs(doc) if x.get("name") == name]
    fields = ("state", "failed", "disabled", "queues")
    line = " ".join("%s=%s" % (f, v[0].get(f) if v else "-") for f in fields)
    ok = (len(v) == 1 and v[0].get("state") == "Connected" and not v[0].get("failed")
          and not v[0].get("disabled") and v[0].get("queues") == queues)
    return line, ok


def iperf_restart(doc, since_ms):
    """iperf3 -J across a daemon restart: Mbit/s, ms spent in 0-byte intervals, and the
    bytes of the intervals from 1 s after `since_ms` (timesecs has whole seconds)."""
    if "error" in doc:
        raise ValueError(doc["error"])
    start = doc["start"]["timestamp"]["timesecs"] * 1000
    zero = after = 0.0
    for i in doc["intervals"]:
        s = i["sum"]
        if s["bytes"] == 0:
            zero += s["seconds"]
        if start + s["start"] * 1000 >= since_ms + 1000:
            after += s["bytes"]
    return "iperf_mbps=%.0f iperf_zero_ms=%.0f bytes_after_restart=%d" % (
        iperf_summary(doc)[0], zero * 1000, after)


def iperf_around(doc, t0, t1):
    """(line, ok) of iperf3 -J intervals during [t0, t1) s of the test and after it; ok
    when the traffic went on (some Mbit/s from t0 on)."""
    iv = [(i["sum"]["start"], i["sum"]["bits_per_second"] / 1e6) for i in doc["intervals"]]
    during = [m for t, m in iv if t0 <= t < t1]
    after = [m for t, m in iv if t >= t1]

    def avg(v):
        return sum(v) / len(v) if v else 0
    line = ("mbps=%.0f destroy_s=%d..%d mbps_during=%.1f mbps_after=%.1f intervals_after=%d "
            "zero_intervals=%d" % (iperf_summary(doc)[0], t0, t1, avg(during), avg(after),
                                   len(after), sum(1 for _, m in iv if m == 0)))
    return line, sum(during) + sum(after) > 0


def log_epoch_ms(line):
    """Epoch ms of an spdlog line "[%Y-%m-%d %H:%M:%S.%e] ..." (local time)."""
    if not line.startswith("[") or len(line) < 24:
        raise ValueError("not a log line: %r" % line[:40])
    t = time.mktime(time.strptime(line[1:20], "%Y-%m-%d %H:%M:%S"))
    return int(t) * 1000 + int(line[21:24])


def netfront_sim_report(text):
    """netfront-sim's exit report: the last JSON line of its stdout."""
    lines = [line for line in text.splitlines() if line.startswith("{")]
    if not lines:
        raise ValueError("no JSON report from netfront-sim")
    return json.loads(lines[-1])


REPORT_SUMS = ["tx_packets", "rx_packets", "tx_error_responses", "tx_dropped", "rx_errors",
               "rx_partial_csum", "mcast_sent", "mcast_errors"]


def frontend_report(text):
    """netfront-sim's exit report as words: its counters summed over the queues, the
    largest tx_max_slots, and the multicast toggles (0 without multicast control)."""
    doc = netfront_sim_report(text)
    queues = doc.get("queues", [])
    words = ["personality=%s" % doc.get("personality", "-"), "exit=%s" % doc.get("exit")]
    words += ["%s=%d" % (k, sum(q.get(k, 0) for q in queues)) for k in REPORT_SUMS]
    words.append("tx_max_slots=%d" % max([q.get("tx_max_slots", 0) for q in queues] or [0]))
    words.append("multicast_toggles=%d" % doc.get("multicast_toggles", 0))
    return " ".join(words)


def attack_report(text):
    """netfront-sim's exit report (its last JSON line) after --attack, as words."""
    doc = netfront_sim_report(text)
    attack = doc.get("attack")
    if attack is None:
        return "attack=none exit=%s" % doc.get("exit")
    statuses = ",".join(str(s) for s in attack.get("tx_statuses", [])) or "none"
    return "tx_statuses=%s backend_state=%s exit=%s kicks=%s" % (
        statuses, attack.get("backend_state") or "-", doc.get("exit"), attack.get("kicks", 0))


def read(path):
    with open(path) as f:
        return f.read()


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
        elif cmd == "queue-counter-sum":
            print(queue_counter_sum(json.load(sys.stdin), args[0]))
        elif cmd == "queues-that-sent":
            print(queues_that_sent(json.load(sys.stdin)))
        elif cmd == "queues-moved":
            lines, ok = queues_moved(json.loads(read(args[0])), json.loads(read(args[1])))
            for line in lines:
                print(line)
            return 0 if ok else 1
        elif cmd == "disconnect-counters":
            lines, ok = disconnect_counters(read(args[1]), int(args[0]))
            for line in lines:
                print(line)
            return 0 if ok else 1
        elif cmd == "vif-connected":
            line, ok = vif_connected(json.loads(read(args[2])), args[0], int(args[1]))
            print(line)
            return 0 if ok else 1
        elif cmd == "iperf-restart":
            doc = json.loads(read(args[0]))
            if "error" in doc:
                print('iperf_error="%s"' % doc["error"])
                return 1
            print(iperf_restart(doc, int(args[1])))
        elif cmd == "iperf-around":
            line, ok = iperf_around(json.loads(read(args[0])), int(args[1]), int(args[2]))
            print(line)
            return 0 if ok else 1
        elif cmd == "attack-report":
            print(attack_report(sys.stdin.read()))
        elif cmd == "frontend-report":
            print(frontend_report(sys.stdin.read()))
        elif cmd == "log-ms":
            print(log_epoch_ms(sys.stdin.readline()))
        elif cmd == "no-control-ring":
            return 0 if json.loads(read(args[0]))["control_ring"] is False else 1
        else:
            print("labtool.py: unknown command %s" % cmd, file=sys.stderr)
            return 2
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print("labtool.py %s: %s" % (cmd, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
