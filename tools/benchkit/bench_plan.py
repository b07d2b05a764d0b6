#!/usr/bin/env python3
"""What tools/bench runs: the worlds of each queue count (baselines first: the
ratios need them), each world's tests and their order, from the command line.
Pure: nothing here touches the host (tools/benchkit/driver.py runs the plan)."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

USAGE = """\
tools/bench [--quick | --targets | --g2g | --levers [--only CONFIGS]] [--out DIR] [--bin DIR]
            [--seconds S] [--rounds R] [--queues "1 2 4"] [--poll-us N] [--no-poll]
            [--paths "relay veth unetback"] [--streams N]
            [--tests "NAME:VARIANT:DIR ..."] [--no-gso] [--micro]
tools/bench --report DIR     regenerate results.json/.md/plots from DIR/results.jsonl"""

# --levers: each lever setting's world (path, queues, poll-us, setting) and tests.
LEVER_TESTS_Q1 = ["TCP_STREAM:P1:guest_tx", "TCP_STREAM:P1:guest_rx", "UDP_STREAM:64:guest_tx",
                  "TCP_RR:64:guest_tx"]
LEVER_TESTS_Q2 = ["TCP_STREAM:P4:guest_tx", "TCP_STREAM:P4:guest_rx", "TCP_RR:64:guest_tx"]
LEVER_TESTS_NO_GSO = ["TCP_STREAM:P1:guest_tx", "TCP_STREAM:P1:guest_rx"]
LEVER_WORLDS = {
    1: [("relay", 0, "base"), ("unetback", 500, "base"), ("unetback", 500, "batch-1"),
        ("unetback", 500, "notify-always"), ("unetback", 0, "poll-0"), ("unetback", 50, "poll-50"),
        ("unetback", 500, "spin-free"), ("unetback", 500, "no-gso")],
    2: [("relay", 0, "base"), ("unetback", 500, "base"), ("unetback", 500, "spread"),
        ("unetback", 500, "pinned")],
}
# Each lever test once, in the order the rounds run them.
LEVER_TEST_ORDER = ["TCP_STREAM:P1:guest_tx", "TCP_STREAM:P1:guest_rx", "TCP_STREAM:P4:guest_tx",
                    "TCP_STREAM:P4:guest_rx", "UDP_STREAM:64:guest_tx", "TCP_RR:64:guest_tx"]

# The world's environment for world.sh per lever setting (docs/performance.md, "Levers").
LEVER_ENV = {
    "base": {}, "poll-0": {}, "poll-50": {},
    "spin-free": {"BENCH_DAEMON_FLAGS": "--poll-budget-pct 100"},
    "batch-1": {"BENCH_DAEMON_FLAGS": "--tx-batch 1 --rx-batch 1"},
    "notify-always": {"BENCH_DAEMON_FLAGS": "--notify-always"},
    "no-gso": {"BENCH_NO_GSO": "1"},
    "spread": {"BENCH_GUEST_FLAGS": "--tx-queue-select random"},
    "direct": {"BENCH_DAEMON_FLAGS": "--direct-path true"},
    "pinned": {"BENCH_PIN_WORKERS": "1"},
}


class UsageError(Exception):
    """Bad command line or a missing tool: a message and exit status 2."""


@dataclass(frozen=True)
class World:
    path: str  # unetback | relay | veth
    queues: int
    poll_us: int
    config: str = "base"  # the lever setting

    @property
    def label(self) -> str:
        label = self.path if self.config == "base" else f"{self.path}:{self.config}"
        return f"{label:<8} q={self.queues} poll={self.poll_us:<3}"


@dataclass
class Plan:
    seconds: int
    rounds: int
    queue_counts: list[int]
    tests: list[str]
    worlds: dict[int, list[World]]
    world_tests: dict[World, list[str]]
    poll_values: list[int]

    @property
    def total(self) -> int:
        return self.rounds * sum(len(self.world_tests[w]) for ws in self.worlds.values() for w in ws)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="tools/bench", usage=USAGE, add_help=True)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true")
    mode.add_argument("--targets", action="store_true")
    mode.add_argument("--g2g", action="store_true")
    mode.add_argument("--levers", action="store_true")
    p.add_argument("--only", default="")
    p.add_argument("--out")
    p.add_argument("--bin", default=os.environ.get("UNETBACK_BIN", str(ROOT / "build/release/bin")))
    p.add_argument("--seconds", type=int)
    p.add_argument("--rounds", type=int)
    p.add_argument("--queues")
    p.add_argument("--poll-us", type=int, default=50)
    p.add_argument("--no-poll", action="store_true")
    p.add_argument("--paths", default="relay veth unetback")
    p.add_argument("--streams", type=int, default=4)
    p.add_argument("--tests", default="")
    p.add_argument("--no-gso", action="store_true")
    p.add_argument("--micro", action="store_true")
    p.add_argument("--report")
    return p.parse_args(argv)


def default_tests(a: argparse.Namespace) -> list[str]:
    if a.g2g:
        return ["TCP_STREAM:P1:g2g", "TCP_STREAM:P4:g2g", "UDP_STREAM:64:g2g", "TCP_RR:64:g2g",
                "UDP_RR:64:g2g"]
    if a.targets:
        return ["TCP_STREAM:P1:guest_tx", "TCP_STREAM:P1:guest_rx", "UDP_STREAM:64:guest_tx",
                "UDP_STREAM:64:guest_rx", "TCP_RR:64:guest_tx", "UDP_RR:64:guest_tx", "IDLE:5:none"]
    s = a.streams
    if a.quick:
        return ["TCP_STREAM:P1:guest_tx", "TCP_STREAM:P1:guest_rx", f"TCP_STREAM:P{s}:guest_tx",
                "UDP_STREAM:64:guest_tx", "UDP_STREAM:64:guest_rx", "TCP_RR:64:guest_tx",
                "UDP_RR:64:guest_tx"]
    tests = []
    for d in ("guest_tx", "guest_rx"):
        tests += [f"TCP_STREAM:P1:{d}", f"TCP_STREAM:P{s}:{d}", f"TCP_STREAM:P1-l128:{d}",
                  f"TCP_STREAM:P{s}-l128:{d}", f"UDP_STREAM:64:{d}", f"UDP_STREAM:1472:{d}",
                  f"TCP_RR:64:{d}", f"UDP_RR:64:{d}"]
    return tests + ["IDLE:5:none"]


def lever_world_tests(w: World) -> list[str]:
    if w.queues == 1:
        return LEVER_TESTS_NO_GSO if w.config == "no-gso" else LEVER_TESTS_Q1
    return LEVER_TESTS_Q2


def plan(a: argparse.Namespace) -> Plan:
    """The worlds per queue count (baselines first: the ratios need them) and their tests."""
    seconds, queues, rounds, no_poll, paths = a.seconds, a.queues, a.rounds, a.no_poll, a.paths
    if a.levers:
        if a.tests:
            raise UsageError("--levers runs its own tests")
        seconds, queues, rounds = seconds or 4, queues or "1 2", rounds or 3
        tests = LEVER_TEST_ORDER
    else:
        if a.g2g or a.targets:
            seconds, queues, no_poll = seconds or 4, queues or "1 2", True
        elif a.quick:
            seconds, queues, no_poll = seconds or 2, queues or "2", True
        else:
            seconds, queues = seconds or 10, queues or "1 2 4"
        tests = a.tests.split() if a.tests else default_tests(a)
    poll_values = [0] if no_poll else [0, a.poll_us]
    queue_counts = [int(q) for q in queues.split()]
    worlds: dict[int, list[World]] = {}
    world_tests: dict[World, list[str]] = {}
    only = set(a.only.replace(",", " ").split())
    for q in queue_counts:
        ws = []
        if a.levers:
            for path, poll, config in LEVER_WORLDS.get(q, LEVER_WORLDS[2]):
                if not only or config == "base" or config in only:
                    ws.append(World(path, q, poll, config))
        else:
            for p in ("relay", "veth", "unetback"):
                if p not in paths.split():
                    continue
                if p != "unetback":
                    ws.append(World(p, q, 0))
                    continue
                ws += [World(p, q, pv) for pv in poll_values]
                if a.g2g:  # the direct path (docs/direct-path.md) beside it
                    ws.append(World(p, q, 0, "direct"))
        worlds[q] = ws
        for w in ws:
            world_tests[w] = lever_world_tests(w) if a.levers else tests
    return Plan(seconds, rounds or 1, queue_counts, tests, worlds, world_tests, poll_values)
