#!/usr/bin/env python3
"""The lab's Python: the dom0 parsers (tools/xen-lab/dom0/labtool.py,
xentrace_count.py), the restart scenario's samplers (restart_sampler.py) and the host
reports of the compare and account scenarios (tools/xen-lab/lib/*_report.py), on
synthetic console lines. No QEMU, no root."""

import json
import pathlib
import socket
import struct
import sys
import threading
import tempfile
import unittest

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools" / "xen-lab" / "dom0"))
sys.path.insert(0, str(ROOT / "tools" / "xen-lab" / "lib"))
import account_report  # noqa: E402
import compare_report  # noqa: E402
import labtool  # noqa: E402
import restart_sampler  # noqa: E402
import xentrace_count  # noqa: E402


def sample(rnd, backend, q, test, value, unit, nbytes=None, busy=None):
    extra = ""
    if nbytes is not None:
        extra = f" bytes={nbytes} secs=6.00 dom0_busy_s={busy} dom0_steal_s=0.10"
    return (f"LAB-RESULT scenario=compare sample round={rnd} backend={backend} q={q} "
            f"test={test} value={value} unit={unit}{extra}")


class LabTool(unittest.TestCase):
    def test_iperf_summary_is_what_was_received(self):
        doc = {"end": {"sum_received": {"bits_per_second": 5.5e8, "bytes": 412500000,
                                        "seconds": 6.0}}}
        self.assertEqual(labtool.iperf_summary(doc), (550.0, 412500000, 6.0))
        with self.assertRaises(ValueError):
            labtool.iperf_summary({"error": "unable to connect"})

    def test_sockperf_takes_the_last_average(self):
        text = "warm up avg-latency=900.1\nsockperf: ====> avg-latency=1039.079 (std-dev=3)\n"
        self.assertEqual(labtool.sockperf_avg_us(text), 1039.079)
        with self.assertRaises(ValueError):
            labtool.sockperf_avg_us("sockperf: no reply")

    def test_attack_report_reads_netfront_sims_last_json_line(self):
        out = ('[info] connected\n{"exit":0,"queues":[],"attack":{"name":"tx-bad-gref",'
               '"tx_statuses":[-1],"backend_state":"4"}}\n')
        self.assertEqual(labtool.attack_report(out), "tx_statuses=-1 backend_state=4 exit=0 kicks=0")
        none = ('{"exit":4,"queues":[],"attack":{"name":"x","tx_statuses":[],"backend_state":"5",'
                '"kicks":7}}')
        self.assertEqual(labtool.attack_report(none),
                         "tx_statuses=none backend_state=5 exit=4 kicks=7")
        self.assertEqual(labtool.attack_report('{"exit":3}'), "attack=none exit=3")
        with self.assertRaises(ValueError):
            labtool.attack_report("setup failed\n")

    def test_frontend_report_sums_queues_and_takes_the_largest_slot_count(self):
        out = ('log line\n{"exit":0,"personality":"gplpv","multicast_toggles":3,"queues":['
               '{"tx_packets":5,"rx_packets":7,"tx_max_slots":19,"mcast_sent":2,"tx_error_responses":0},'
               '{"tx_packets":1,"rx_packets":2,"tx_max_slots":4,"rx_partial_csum":1}]}\n')
        self.assertEqual(labtool.frontend_report(out),
                         "personality=gplpv exit=0 tx_packets=6 rx_packets=9 tx_error_responses=0 "
                         "tx_dropped=0 rx_errors=0 rx_partial_csum=1 mcast_sent=2 mcast_errors=0 "
                         "tx_max_slots=19 multicast_toggles=3")
        with self.assertRaises(ValueError):
            labtool.frontend_report("setup failed\n")

    def test_queue_counter_lines(self):
        doc = {"result": [{"name": "vif3.0", "queues": [
            {"queue": 0, "counters": {"tx_packets": 5, "rx_packets": 7}},
            {"queue": 1, "counters": {"tx_packets": 1}}]}]}
        self.assertEqual(labtool.queue_counter_lines(doc, ["tx_packets", "rx_packets"]),
                         ["vif=vif3.0 queue=0 tx_packets=5 rx_packets=7",
                          "vif=vif3.0 queue=1 tx_packets=1 rx_packets=-"])

    def test_queue_counter_lines_add_the_direct_path_where_the_vif_has_it(self):
        doc = [{"name": "vif3.0", "queues": [{"queue": 0, "counters": {"tx_packets": 9}},
                                             {"queue": 1, "counters": {"tx_packets": 4}}],
                "direct": {"peers": ["vif4.0"], "queues": [
                    {"queue": 0, "tx_packets": 8, "rx_packets": 3, "tx_drops_full": 1}]}}]
        self.assertEqual(labtool.queue_counter_lines(doc, ["tx_packets"]),
                         ["vif=vif3.0 queue=0 tx_packets=9 direct_tx_packets=8 "
                          "direct_rx_packets=3 direct_tx_drops_full=1 direct_peers=vif4.0",
                          "vif=vif3.0 queue=1 tx_packets=4 direct_tx_packets=- "
                          "direct_rx_packets=- direct_tx_drops_full=- direct_peers=vif4.0"])

    def test_account_divides_every_counter_and_skips_what_was_not_counted(self):
        kp = ("# started on ...\n\n2048,,kprobes:acct_gnttab_batch_copy,5,100.00,,\n"
              "<not counted>,,kprobes:acct_gnttab_map_refs,0,0.00,,\n")
        sc = "300,,syscalls:sys_enter_ioctl,5,100,,\n"
        words = labtool.account_words(100, kp, sc)
        self.assertEqual(words, "units=100 per_unit_gnttab_batch_copy=20.48 "
                                "per_unit_sys_enter_ioctl=3")

    def test_perf_top_reads_perf_reports_lines(self):
        text = ("# Overhead  Command  Symbol\n"
                "    35.98%  swapper          [k] xen_hypercall_pv\n"
                "     0.28%  vif1.0-q0        [.] unetback::datapath::rx_path::place_held\n"
                "     0.10%  iperf3           [k] tcp_ack\n")
        self.assertEqual(labtool.perf_top(text, 2), [
            "rank=1 pct=35.98 comm=swapper sym=xen_hypercall_pv",
            "rank=2 pct=0.28 comm=vif1.0-q0 sym=unetback::datapath::rx_path::place_held"])


def stats(*queues, name="vif3.0"):
    """A `unetbackctl stats --json` answer of one vif: (tx_packets, rx_packets) per queue."""
    return [{"name": name, "queues": [
        {"queue": i, "counters": {"tx_packets": tx, "rx_packets": rx, "kicks": i + 1}}
        for i, (tx, rx) in enumerate(queues)]}]


class LabToolDaemonCounters(unittest.TestCase):
    def test_sums_and_queues_that_sent(self):
        doc = stats((5, 1), (0, 9))
        self.assertEqual(labtool.queue_counter_sum(doc, "kicks"), 3)
        self.assertEqual(labtool.queue_counter_sum(doc, "no_such_counter"), 0)
        self.assertEqual(labtool.queues_that_sent(doc), 1)
        self.assertEqual(labtool.queues_that_sent({"result": doc}), 1)

    def test_queues_moved_needs_every_queue_to_send_and_receive(self):
        before = stats((5, 5), (5, 5))
        lines, ok = labtool.queues_moved(before, stats((6, 7), (9, 6)))
        self.assertTrue(ok)
        self.assertEqual(lines[0], "vif=vif3.0 queue=0 tx_packets_delta=1 rx_packets_delta=2")
        self.assertFalse(labtool.queues_moved(before, stats((6, 7), (9, 5)))[1])
        self.assertFalse(labtool.queues_moved(before, [])[1])

    def test_disconnect_counters_take_the_last_connection(self):
        text = "\n".join([
            '{"queue": 0, "tx_packets": 1, "rx_packets": 1}',
            '{"queue": 1, "tx_packets": 0, "rx_packets": 4}',
            "not json",
            '{"queue": 0, "tx_packets": 3, "rx_packets": 2, "tx_bytes": 10, "rx_bytes": 20}',
            '{"queue": 1, "tx_packets": 5, "rx_packets": 6}'])
        lines, ok = labtool.disconnect_counters(text, 2)
        self.assertTrue(ok)
        self.assertEqual(lines[0], "queue=0 tx_packets=3 rx_packets=2 tx_bytes=10 rx_bytes=20")
        self.assertFalse(labtool.disconnect_counters(text, 4)[1])
        self.assertTrue(labtool.disconnect_counters(text, 0)[1])
        self.assertFalse(labtool.disconnect_counters(text.rsplit("\n", 1)[0] +
                                                     '\n{"queue": 1, "tx_packets": 0}', 2)[1])

    def test_vif_connected(self):
        listed = [{"name": "vif3.0", "state": "Connected", "failed": False, "disabled": False,
                   "queues": 2}]
        line, ok = labtool.vif_connected(listed, "vif3.0", 2)
        self.assertTrue(ok)
        self.assertEqual(line, "state=Connected failed=False disabled=False queues=2")
        self.assertFalse(labtool.vif_connected(listed, "vif3.0", 4)[1])
        self.assertFalse(labtool.vif_connected(listed, "vif4.0", 2)[1])
        listed[0]["disabled"] = True
        self.assertFalse(labtool.vif_connected(listed, "vif3.0", 2)[1])

    def test_iperf_restart_counts_zero_intervals_and_bytes_after_the_restart(self):
        doc = {"start": {"timestamp": {"timesecs": 1000}},
               "end": {"sum_received": {"bits_per_second": 2e8, "bytes": 3000, "seconds": 3}},
               "intervals": [{"sum": {"start": 0, "seconds": 1, "bytes": 1000}},
                             {"sum": {"start": 1, "seconds": 1, "bytes": 0}},
                             {"sum": {"start": 2, "seconds": 1, "bytes": 2000}}]}
        self.assertEqual(labtool.iperf_restart(doc, 1000 * 1000 + 500),
                         "iperf_mbps=200 iperf_zero_ms=1000 bytes_after_restart=2000")

    def test_iperf_around_splits_intervals_at_the_event(self):
        def interval(t, mbps):
            return {"sum": {"start": t, "seconds": 1, "bytes": int(mbps * 125000),
                            "bits_per_second": mbps * 1e6}}
        doc = {"end": {"sum_received": {"bits_per_second": 5e7, "bytes": 1, "seconds": 4}},
               "intervals": [interval(0, 100), interval(1, 40), interval(2, 0), interval(3, 60)]}
        line, ok = labtool.iperf_around(doc, 1, 2)
        self.assertTrue(ok)
        self.assertEqual(line, "mbps=50 destroy_s=1..2 mbps_during=40.0 mbps_after=30.0 "
                               "intervals_after=2 zero_intervals=1")
        doc["intervals"] = [interval(0, 100), interval(1, 0), interval(2, 0)]
        self.assertFalse(labtool.iperf_around(doc, 1, 2)[1])

    def test_log_ms_reads_spdlogs_timestamp(self):
        line = "[2026-12-03 07:01:02.345] [info] vif3.0: resuming at ..."
        base = labtool.log_epoch_ms(line.replace("02.345", "00.000"))
        self.assertEqual(labtool.log_epoch_ms(line) - base, 2345)
        with self.assertRaises(ValueError):
            labtool.log_epoch_ms("vif3.0: no timestamp")

    def test_commands_exit_status_is_the_verdict(self):
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "hash.json"
            path.write_text(json.dumps({"name": "vif3.0", "control_ring": False}))
            self.assertEqual(labtool.main(["labtool.py", "no-control-ring", str(path)]), 0)
            path.write_text(json.dumps({"name": "vif3.0", "control_ring": True}))
            self.assertEqual(labtool.main(["labtool.py", "no-control-ring", str(path)]), 1)
            a, b = pathlib.Path(d) / "a.json", pathlib.Path(d) / "b.json"
            a.write_text(json.dumps(stats((1, 1))))
            b.write_text(json.dumps(stats((2, 1))))
            self.assertEqual(labtool.main(["labtool.py", "queues-moved", str(a), str(b)]), 1)
            self.assertEqual(labtool.main(["labtool.py", "nonsense"]), 2)


class RestartSampler(unittest.TestCase):
    def serve_one(self, sock, reply_type, value):
        """A xenstored that answers one request; returns what it was asked."""
        asked = {}

        def serve():
            header = sock.recv(16, socket.MSG_WAITALL)
            msg_type, req_id, tx_id, n = struct.unpack("<IIII", header)
            asked.update(type=msg_type, req_id=req_id, tx_id=tx_id,
                         path=sock.recv(n, socket.MSG_WAITALL))
            body = value.encode() + b"\0"
            sock.sendall(struct.pack("<IIII", reply_type, req_id, 0, len(body)) + body)
        t = threading.Thread(target=serve)
        t.start()
        return t, asked

    def test_xs_read_speaks_xs_wire(self):
        ours, theirs = socket.socketpair()
        with ours, theirs:
            t, asked = self.serve_one(theirs, 2, "4")
            self.assertEqual(restart_sampler.xs_read(ours.fileno(), 7,
                                                     "/local/domain/3/device/vif/0/state"), "4")
            t.join()
            self.assertEqual(asked, {"type": 2, "req_id": 7, "tx_id": 0,
                                     "path": b"/local/domain/3/device/vif/0/state\0"})
            t, _ = self.serve_one(theirs, 16, "ENOENT")
            self.assertEqual(restart_sampler.xs_read(ours.fileno(), 8, "/gone"), "gone")
            t.join()

    def test_xs_read_of_a_closed_connection_is_an_error(self):
        ours, theirs = socket.socketpair()
        with ours:
            theirs.close()
            with self.assertRaises(OSError):
                restart_sampler.xs_read(ours.fileno(), 1, "/x")


class CompareReport(unittest.TestCase):
    def lines(self):
        out = ["LAB-RESULT scenario=compare meta rounds=3 secs=6 rr_secs=4 queues=1_2 "
               "backends=netback,unetbackd"]
        # Bulk, q=1: unetbackd / netback per round 1.2, 0.5, 1.0 -> median 1.0 (the
        # figures' own medians 300 / 300 agree here by construction).
        for rnd, (nb, ub) in enumerate([(200, 240), (400, 200), (300, 300)], start=1):
            out.append(sample(rnd, "netback", 1, "tcp_to_guest", nb, "mbps",
                              nbytes=int(nb * 1e6 * 6 / 8), busy=nb / 100))
            out.append(sample(rnd, "unetbackd", 1, "tcp_to_guest", ub, "mbps",
                              nbytes=int(ub * 1e6 * 6 / 8), busy=ub / 50))
            out.append(sample(rnd, "netback", 1, "udp_pp", 1000, "us"))
            out.append(sample(rnd, "unetbackd", 1, "udp_pp", 1100, "us"))
            out.append(sample(rnd, "unetbackd", 2, "udp_pp", 1000, "us"))
            out.append(sample(rnd, "netback", 2, "udp_pp", 900, "us"))
        out.append("LAB-RESULT scenario=basic unrelated=1")
        return out

    def test_ratios_are_paired_per_round_then_the_median(self):
        doc = compare_report.report(self.lines(), {"tcg": "multi"})
        comp = {(c["backend"], c["q"], c["test"]): c for c in doc["comparisons"]}
        bulk = comp[("unetbackd", 1, "tcp_to_guest")]
        self.assertAlmostEqual(bulk["ratio"]["median"], 1.0)
        self.assertAlmostEqual(bulk["ratio"]["min"], 0.5)
        self.assertAlmostEqual(bulk["ratio"]["max"], 1.2)
        # CPU per GB: netback busy/GB = (nb/100) / (nb*0.75e-3) = 13.33; unetbackd 26.67.
        self.assertAlmostEqual(bulk["cpu_ratio"]["median"], 2.0)
        self.assertAlmostEqual(comp[("unetbackd", 1, "udp_pp")]["ratio"]["median"], 1.1)

    def test_targets_and_scaling_judge_latency_as_lower_is_better(self):
        doc = compare_report.report(self.lines(), {"tcg": "multi"})
        t = {(x["backend"], x["what"]): x for x in doc["targets"]}
        self.assertTrue(t[("unetbackd", "tcp_to_guest q=1 ÷ kernel")]["met"])  # 1.0 >= 1.0
        self.assertFalse(t[("unetbackd", "tcp_to_guest q=1 CPU/GB ÷ kernel")]["met"])
        self.assertFalse(t[("unetbackd", "udp_pp q=1 latency ÷ kernel")]["met"])
        # 2 queues at 1000 us vs 1 queue at 1100 us: 1.1 times as fast.
        sc = {(s["backend"], s["test"]): s for s in doc["scaling"]}
        self.assertAlmostEqual(sc[("unetbackd", "udp_pp")]["speedup"], 1.1)
        self.assertTrue(t[("unetbackd", "udp_pp q=2 ÷ q=1 (speed)")]["met"])

    def test_guest_to_guest_bulk_is_judged_as_bulk_with_its_cpu_per_gb(self):
        lines = self.lines()
        for rnd in (1, 2, 3):
            lines.append(sample(rnd, "netback", 1, "g2g_tcp", 100, "mbps",
                                nbytes=int(100e6 * 6 / 8), busy=1.0))
            lines.append(sample(rnd, "unetbackd", 1, "g2g_tcp", 50, "mbps",
                                nbytes=int(50e6 * 6 / 8), busy=1.0))
        doc = compare_report.report(lines, {"tcg": "multi"})
        comp = {(c["backend"], c["q"], c["test"]): c for c in doc["comparisons"]}
        g2g = comp[("unetbackd", 1, "g2g_tcp")]
        self.assertAlmostEqual(g2g["ratio"]["median"], 0.5)
        self.assertAlmostEqual(g2g["cpu_ratio"]["median"], 2.0)  # same CPU, half the bytes
        t = {(x["backend"], x["what"]): x for x in doc["targets"]}
        self.assertFalse(t[("unetbackd", "g2g_tcp q=1 ÷ kernel")]["met"])
        self.assertIn("| TCP bulk guest to guest | 1 | unetbackd |",
                      compare_report.markdown(doc))

    def test_tcg_single_lowers_the_bulk_bar(self):
        doc = compare_report.report(self.lines(), {"tcg": "single"})
        t = {(x["backend"], x["what"]): x for x in doc["targets"]}
        self.assertEqual(t[("unetbackd", "tcp_to_guest q=1 ÷ kernel")]["target"], ">= 0.9")

    def test_main_writes_json_and_markdown(self):
        with tempfile.TemporaryDirectory() as d:
            log = pathlib.Path(d) / "console.log"
            log.write_text("\r\n".join(self.lines()) + "\r\n")
            out = pathlib.Path(d) / "out"
            self.assertEqual(compare_report.main(["x", str(log), str(out), "--meta", "tcg=multi"]),
                             0)
            doc = json.loads((out / "compare.json").read_text())
            self.assertEqual(doc["meta"]["tcg"], "multi")
            self.assertEqual(doc["meta"]["rounds"], "3")
            self.assertIn("| TCP bulk to the guest | 1 | unetbackd |",
                          (out / "compare.md").read_text())

    def test_a_run_cut_short_says_how_many_rounds_it_measured(self):
        whole = compare_report.markdown(compare_report.report(self.lines(), {"tcg": "multi"}))
        self.assertIn("3 alternated rounds (", whole)
        cut = [x for x in self.lines() if "round=3 backend=unetbackd" not in x]
        text = compare_report.markdown(compare_report.report(cut, {"tcg": "multi"}))
        self.assertIn("3 alternated rounds planned, measured in netback 3, unetbackd 2", text)

    def test_a_log_without_samples_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            log = pathlib.Path(d) / "console.log"
            log.write_text("LAB-DONE rc=0\n")
            self.assertEqual(compare_report.main(["x", str(log), d]), 1)


class AccountReport(unittest.TestCase):
    def test_counters_per_unit_side_by_side(self):
        lines = [
            "LAB-RESULT scenario=account account backend=netback test=tcp_to_guest unit=MB "
            "dom0_busy_s=4.00 backend_ctxsw=400 units=400 per_unit_gnttab_batch_copy=15",
            "LAB-RESULT scenario=account account backend=unetbackd test=tcp_to_guest unit=MB "
            "dom0_busy_s=6.00 backend_ctxsw=40 units=300 per_unit_gnttab_batch_copy=20 "
            "per_unit_sys_enter_ioctl=12",
            "LAB-RESULT scenario=account profile backend=unetbackd test=tcp_to_guest rank=1 "
            "pct=11.4 comm=vif1.0-q0 sym=xen_hypercall_pv",
        ]
        accounts, profiles, _ = account_report.read(lines)
        by = {a["backend"]: a["per_unit"] for a in accounts}
        self.assertAlmostEqual(by["netback"]["dom0_busy"], 10.0)  # ms per MB
        self.assertAlmostEqual(by["unetbackd"]["dom0_busy"], 20.0)
        self.assertAlmostEqual(by["unetbackd"]["backend_ctxsw"], 40 / 300)
        md = account_report.markdown({"meta": {}, "accounts": accounts, "profiles": profiles})
        self.assertIn("| GNTTABOP_copy hypercalls | 15 | 20 |", md)
        self.assertIn("|   ioctl (grant copy, event-channel notify) | – | 12 |", md)
        self.assertIn("11.4% vif1.0-q0 xen_hypercall_pv", md)

    def test_xen_work_per_side_largest_first_guests_added_up(self):
        head = "LAB-RESULT scenario=account hypervisor "
        lines = [
            "LAB-RESULT scenario=account account backend=netback test=udp_pp "
            "unit=transaction dom0_busy_s=1 backend_ctxsw=1 units=10 per_unit_x=1",
            head + "backend=netback test=udp_pp unit=transaction rate=10 dom=0 trace_s=2 "
            "lost_records=0 count_hc_iret=60 count_hc_grant_table_op=40",
            head + "backend=unetbackd test=udp_pp unit=transaction rate=5 dom=0 trace_s=2 "
            "lost_records=1 count_hc_iret=120 count_pv_page_fault=1",
            head + "backend=unetbackd test=udp_pp unit=transaction rate=5 dom=3 trace_s=2 "
            "lost_records=1 count_hc_iret=20",
            head + "backend=unetbackd test=udp_pp unit=transaction rate=5 dom=4 trace_s=2 "
            "lost_records=1 count_hc_iret=15",
        ]
        accounts, profiles, hyp = account_report.read(lines)
        md = account_report.markdown({"meta": {}, "accounts": accounts, "profiles": profiles,
                                      "hypervisor": hyp})
        dom0 = md[md.index("for dom0"):md.index("for guests")]
        self.assertIn("lost records: 1", dom0)
        self.assertNotIn("less the idle pass", dom0)  # no idle pass in this log
        self.assertLess(dom0.index("| hc_iret | 3 | 12 |"),
                        dom0.index("| hc_grant_table_op | 2 | 0 |"))
        self.assertNotIn("pv_page_fault", dom0)  # under 0.5 per unit everywhere
        self.assertIn("| hc_iret | – | 3.5 |", md[md.index("for guests"):])

    def test_xen_work_is_less_the_idle_rate_over_the_same_window(self):
        head = "LAB-RESULT scenario=account hypervisor "
        lines = [
            head + "backend=none test=idle unit=second rate=1 dom=0 trace_s=4 "
            "lost_records=0 count_hc_iret=400",
            head + "backend=unetbackd test=udp_pp unit=transaction rate=200 dom=0 "
            "trace_s=5 lost_records=0 count_hc_iret=50500",
        ]
        _, _, hyp = account_report.read(lines)
        self.assertEqual(len(hyp), 1)  # the idle row only serves the subtraction
        self.assertAlmostEqual(hyp[0]["per_unit"]["hc_iret"], (50500 - 100 * 5) / 1000)
        self.assertTrue(hyp[0]["idle_subtracted"])
        md = account_report.markdown({"meta": {}, "accounts": [], "profiles": [],
                                      "hypervisor": hyp})
        self.assertIn("less the idle pass's rate", md)


def trace_record(event, extra, tsc=True):
    header = event | (len(extra) << 28) | (int(tsc) << 31)
    return struct.pack("<I", header) + (struct.pack("<II", 1, 0) if tsc else b"") + \
        struct.pack("<%dI" % len(extra), *extra)


class XentraceCount(unittest.TestCase):
    def test_events_go_to_the_domain_running_on_their_cpu(self):
        running = xentrace_count.TRC_SCHED_RUNSTATE_CHANGE | (1 << 8)  # runnable -> running
        data = b"".join([
            trace_record(xentrace_count.TRC_TRACE_CPU_CHANGE, [0, 0], tsc=False),
            trace_record(running, [(0 << 16) | 1, 0x10]),           # dom0 vcpu 1 on cpu 0
            trace_record(xentrace_count.TRC_PV_HYPERCALL_V2, [23 | 0x00100000, 0]),  # iret
            trace_record(xentrace_count.TRC_PV_HYPERCALL_V2 | 0x100, [20, 3, 0]),
            trace_record(0x00201004 | 0x100, [1, 2, 3, 4, 5]),       # a page fault
            trace_record(xentrace_count.TRC_TRACE_CPU_CHANGE, [1, 0], tsc=False),
            trace_record(running, [(5 << 16) | 0, 0x10]),           # dom5 on cpu 1
            trace_record(xentrace_count.TRC_PV_HYPERCALL_V2, [32]),  # event_channel_op
            trace_record(xentrace_count.TRC_PV_HYPERCALL_SUBCALL, [1]),  # mmu_update
            trace_record(running, [(0x7FFF << 16), 0x10]),          # idle on cpu 1
            trace_record(xentrace_count.TRC_PV_HYPERCALL_V2, [29]),  # not counted
            trace_record(xentrace_count.TRC_TRACE_CPU_CHANGE, [0, 0], tsc=False),
            trace_record(xentrace_count.TRC_PV_HYPERCALL_V2, [23]),  # dom0 still on cpu 0
            trace_record(xentrace_count.TRC_LOST_RECORDS, [7]),
        ]) + struct.pack("<I", 0x00201004 | (5 << 28))  # cut off at the end
        w = xentrace_count.count(data)
        self.assertEqual(dict(w.per_dom[0]), {"hc_iret": 2, "hc_grant_table_op": 1,
                                              "pv_page_fault": 1})
        self.assertEqual(dict(w.per_dom[5]), {"hc_event_channel_op": 1, "sub_mmu_update": 1})
        self.assertEqual(w.lost, 1)
        self.assertNotIn(0x7FFF, w.per_dom)
        self.assertEqual(xentrace_count.lines(w, 1000)[0],
                         "dom=0 trace_s=0.000 lost_records=1 count_hc_grant_table_op=1 "
                         "count_hc_iret=2 count_pv_page_fault=1")

    def test_the_window_is_the_span_of_the_time_stamps(self):
        event = xentrace_count.TRC_PV_HYPERCALL_V2
        data = b"".join([
            trace_record(xentrace_count.TRC_TRACE_CPU_CHANGE, [1, 0], tsc=False),
            struct.pack("<III", event | (1 << 28) | (1 << 31), 3_000_000_000, 0) + b"\0" * 4,
            trace_record(xentrace_count.TRC_TRACE_CPU_CHANGE, [0, 0], tsc=False),
            struct.pack("<III", event | (1 << 28) | (1 << 31), 1_000_000_000, 0) + b"\0" * 4,
        ])
        self.assertAlmostEqual(xentrace_count.count(data).seconds(2000), 1.0)  # 2 GHz
        self.assertEqual(xentrace_count.count(b"").seconds(2000), 0.0)


if __name__ == "__main__":
    unittest.main()
