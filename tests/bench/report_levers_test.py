#!/usr/bin/env python3
"""tools/benchkit/report.py on a `tools/bench --levers` run: the lever table pairs
ON and OFF per round (ratio of the same round's figures, then the median), takes
(a) tap-relay from the same queue count, and writes the table for a levers run
instead of the path table; a `--g2g` run's direction is labelled guest to guest.
Synthetic results.jsonl, no network."""

import json
import pathlib
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # tools/benchkit holds no compiled files of ours
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "benchkit"))
import report  # noqa: E402


def run(path, config, queues, test, variant, direction, rnd, value, ok=True):
    metric = report.PRIMARY[test]
    return {"path": path, "queues": queues, "poll_us": 500, "config": config, "test": test,
            "variant": variant, "direction": direction, "round": rnd, "seconds": 4, "ok": ok,
            "datapath_cpu_pct": 50, "metrics": {metric: value} if ok else None}


def reported(runs, meta):
    """report.py over RUNS and META in a temporary directory: results.md and results.json."""
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d)
        (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
        (out / "meta.json").write_text(json.dumps(meta))
        sys.argv = ["report.py", d]
        assert report.main() == 0
        return (out / "results.md").read_text(), json.loads((out / "results.json").read_text())


class LeverRows(unittest.TestCase):
    def test_on_off_ratio_is_paired_per_round_then_the_median(self):
        runs = []
        # ON / OFF per round: 10/5, 20/40, 30/30 -> ratios 2, 0.5, 1, median 1;
        # the figures' own medians are 20 (ON) and 30 (OFF), whose ratio (0.67)
        # is not what a same-round comparison gives.
        for rnd, (on, off) in enumerate([(10, 5), (20, 40), (30, 30)], start=1):
            runs.append(run("relay", "base", 1, "TCP_STREAM", "P1", "guest_tx", rnd, 7))
            runs.append(run("unetback", "base", 1, "TCP_STREAM", "P1", "guest_tx", rnd, on))
            runs.append(run("unetback", "batch-1", 1, "TCP_STREAM", "P1", "guest_tx", rnd, off))
        rows = [r for r in report.lever_rows(runs) if r["lever"] == "batching"]
        self.assertEqual(len(rows), 1)
        row = rows[0]
        self.assertEqual(row["ratios"], [2.0, 0.5, 1.0])
        self.assertEqual(row["ratio"], 1.0)
        self.assertEqual(row["on_value"], 20)
        self.assertEqual(row["off_value"], 30)
        self.assertEqual(row["relay"], 7)

    def test_a_failed_round_drops_only_its_pair(self):
        runs = [run("unetback", "pinned", 2, "TCP_RR", "64", "guest_tx", 1, 100),
                run("unetback", "base", 2, "TCP_RR", "64", "guest_tx", 1, 50),
                run("unetback", "pinned", 2, "TCP_RR", "64", "guest_tx", 2, 0, ok=False),
                run("unetback", "base", 2, "TCP_RR", "64", "guest_tx", 2, 80)]
        row = next(r for r in report.lever_rows(runs) if r["lever"] == "thread placement")
        self.assertEqual(row["ratios"], [2.0])
        self.assertEqual(row["off_value"], 65)
        self.assertIsNone(row["relay"])

    def test_levers_run_writes_the_lever_table(self):
        runs = [run("unetback", "base", 1, "TCP_RR", "64", "guest_tx", 1, 300),
                run("unetback", "notify-always", 1, "TCP_RR", "64", "guest_tx", 1, 200)]
        md, doc = reported(runs, {"levers": True, "rounds": 1})
        self.assertIn("| notification suppression | TCP_RR 64 | guest→host |", md)
        self.assertIn("**1.50×**", md)
        self.assertEqual(len(doc["levers"]), 1)


class GuestToGuest(unittest.TestCase):
    def test_a_g2g_run_is_labelled_guest_to_guest_with_its_ratio(self):
        runs = [run("relay", "base", 1, "TCP_STREAM", "P1", "g2g", 1, 10.0),
                run("unetback", "base", 1, "TCP_STREAM", "P1", "g2g", 1, 5.0)]
        md, doc = reported(runs, {"g2g": True, "rounds": 1})
        self.assertIn("| TCP_STREAM | P1 | guest→guest | 1 |", md)
        row = next(r for r in doc["results"] if r["path"] == "unetback")
        self.assertEqual(row["ratio_to_relay"]["gbps"], 0.5)

    def test_the_direct_path_has_its_own_column_beside_the_tap_path(self):
        runs = [run("relay", "base", 1, "TCP_STREAM", "P1", "g2g", 1, 10.0),
                run("unetback", "base", 1, "TCP_STREAM", "P1", "g2g", 1, 5.0),
                run("unetback", "direct", 1, "TCP_STREAM", "P1", "g2g", 1, 15.0)]
        md, doc = reported(runs, {"g2g": True, "rounds": 1})
        header = next(line for line in md.splitlines() if line.startswith("| test |"))
        self.assertTrue(header.endswith("| unetback poll-us 500 | unetback poll-us 500 direct |"), header)
        line = next(line for line in md.splitlines() if line.startswith("| TCP_STREAM | P1 |"))
        self.assertIn("**0.50×**", line)
        self.assertIn("**1.50×**", line)
        self.assertLess(line.index("**0.50×**"), line.index("**1.50×**"))
        direct = next(r for r in doc["results"] if r.get("config") == "direct")
        self.assertEqual(direct["ratio_to_relay"]["gbps"], 1.5)


if __name__ == "__main__":
    unittest.main()
