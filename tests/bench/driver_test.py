#!/usr/bin/env python3
"""tools/benchkit/driver.py, the driver of tools/bench: the worlds and tests it
plans for each mode, and a run over fake worlds (small scripts that speak the
world protocol), one of which dies mid-run: every test still gets its result
line, the dead world's as failures. No network, no root."""

import json
import pathlib
import sys
import tempfile
import textwrap
import unittest

sys.dont_write_bytecode = True  # tools/benchkit holds no compiled files of ours
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools" / "benchkit"))
import bench_plan  # noqa: E402
import driver  # noqa: E402

# A world as world.sh is one: PATH QUEUES POLL SECONDS RESULTS LOGDIR CMD_FIFO REPLY_FIFO.
# It appends one result line per test; the veth world dies after its first test.
FAKE_WORLD = textwrap.dedent("""\
    import json, sys
    path, queues, poll, secs, results, logdir, cmd, reply = sys.argv[1:9]
    out = open(reply, "w", buffering=1)
    print("ready", file=out)
    runs = 0
    for line in open(cmd):
        verb, *rest = line.split()
        if verb == "quit":
            break
        index, total, rnd, spec = rest
        name, variant, direction = spec.split(":")
        runs += 1
        if path == "veth" and runs == 2:
            sys.exit(1)
        with open(results, "a") as f:
            f.write(json.dumps({"path": path, "queues": int(queues), "test": name,
                                "round": int(rnd), "ok": True}) + "\\n")
        print(f"done [{index}/{total}] {path} {spec}", file=out)
""")


def planned(*argv):
    return bench_plan.plan(bench_plan.parse_args(list(argv)))


class Plans(unittest.TestCase):
    def test_g2g_runs_every_path_and_the_direct_path_at_1_and_2_queues(self):
        p = planned("--g2g")
        self.assertEqual(p.queue_counts, [1, 2])
        self.assertEqual((p.seconds, p.rounds), (4, 1))
        self.assertEqual([(w.path, w.poll_us, w.config) for w in p.worlds[2]],
                         [("relay", 0, "base"), ("veth", 0, "base"), ("unetback", 0, "base"),
                          ("unetback", 0, "direct")])
        self.assertTrue(all(t.endswith(":g2g") for t in p.tests))
        self.assertEqual(p.total, 2 * 4 * len(p.tests))

    def test_levers_only_keeps_the_named_settings_and_the_bases(self):
        p = planned("--levers", "--only", "poll-0,spread")
        self.assertEqual(p.rounds, 3)
        self.assertEqual([w.config for w in p.worlds[1]], ["base", "base", "poll-0"])
        self.assertEqual([w.config for w in p.worlds[2]], ["base", "base", "spread"])
        spread = p.worlds[2][2]
        self.assertEqual(p.world_tests[spread], bench_plan.LEVER_TESTS_Q2)

    def test_the_no_gso_lever_runs_only_bulk_tcp(self):
        p = planned("--levers", "--queues", "1")
        no_gso = next(w for w in p.worlds[1] if w.config == "no-gso")
        self.assertEqual(p.world_tests[no_gso], bench_plan.LEVER_TESTS_NO_GSO)

    def test_polling_adds_a_world_unless_a_mode_turns_it_off(self):
        self.assertEqual(planned("--poll-us", "80").poll_values, [0, 80])
        self.assertEqual(planned("--quick").poll_values, [0])

    def test_levers_refuse_a_test_list(self):
        with self.assertRaises(bench_plan.UsageError):
            planned("--levers", "--tests", "TCP_RR:64:guest_tx")


class RunOverFakeWorlds(unittest.TestCase):
    def test_a_world_that_dies_leaves_failure_lines_and_the_others_finish(self):
        with tempfile.TemporaryDirectory() as d:
            out = pathlib.Path(d)
            script = out / "fake_world.py"
            script.write_text(FAKE_WORLD)
            p = planned("--queues", "1", "--rounds", "2", "--seconds", "1", "--no-poll",
                        "--tests", "TCP_RR:64:guest_tx UDP_RR:64:guest_tx")
            run = driver.Run(out, p, [sys.executable, str(script)], {})
            run.run()
            lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
            self.assertEqual(len(lines), p.total)  # 3 worlds x 2 tests x 2 rounds
            by_path = {}
            for line in lines:
                by_path.setdefault(line["path"], []).append(line)
            self.assertTrue(all(x["ok"] for x in by_path["relay"] + by_path["unetback"]))
            veth = by_path["veth"]
            self.assertEqual([x["ok"] for x in veth], [True, False, False, False])
            self.assertEqual([x.get("error") for x in veth[1:]],
                             ["world stopped answering", "world not running", "world not running"])
            progress = (out / "progress.log").read_text()
            self.assertIn("[1/12] relay TCP_RR:64:guest_tx\n", progress)  # the world's own line
            self.assertIn("FAILED (world stopped answering", progress)


if __name__ == "__main__":
    unittest.main()
