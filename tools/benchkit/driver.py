#!/usr/bin/env python3
"""The driver of tools/bench (docs/performance.md): it runs the plan of
bench_plan.py: keeps every world of a queue count alive (tools/benchkit/world.sh, one
process each, spoken to over two FIFOs), runs each test through all of them
back to back, baseline (a) first, records a result line for every test (a
failed world's too) and ends with report.py.

The world protocol (world.sh): the world answers "ready" once built; then
"run INDEX TOTAL ROUND NAME:VARIANT:DIRECTION" makes it measure one test,
append one JSON line to the results file and answer "done <progress line>";
"quit" makes it remove everything and exit.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench_plan import LEVER_ENV, Plan, UsageError, World, parse_args, plan

KIT = Path(__file__).resolve().parent
ROOT = KIT.parent.parent


def check_host(a: argparse.Namespace, bin_dir: Path) -> None:
    if os.geteuid() != 0:
        raise UsageError("needs root (network namespaces, TAPs)")
    for tool in ("iperf3", "sockperf", "jq", "ss", "gnuplot"):
        if shutil.which(tool) is None:
            raise UsageError(f"{tool} is missing (tools/deps)")
    needed = []
    paths = a.paths.split()
    if a.levers or "unetback" in paths:
        needed += ["unetbackd", "netfront-sim", "sim-xenstored", "sim-xl", "unetbackctl"]
    if a.levers or "relay" in paths:
        needed.append("tap-relay")
    for b in needed:
        if not os.access(bin_dir / b, os.X_OK):
            raise UsageError(f"{bin_dir / b} missing; build: cmake --preset release && "
                             "cmake --build --preset release (or pass --bin DIR)")
    if a.levers:
        helps = {b: subprocess.run([str(bin_dir / b), "--help"], capture_output=True, text=True).stdout
                 for b in ("unetbackd", "netfront-sim")}
        for b, flag in (("unetbackd", "--notify-always"), ("netfront-sim", "--tx-queue-select")):
            if flag not in helps[b]:
                raise UsageError(f"{bin_dir / b} has no {flag} (--levers needs it)")
        if shutil.which("taskset") is None:
            raise UsageError("taskset is missing")


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def git(*args: str) -> str:
    r = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def write_meta(out: Path, argv: list[str], a: argparse.Namespace, p: Plan, bin_dir: Path) -> None:
    cpu = next((line.split(": ", 1)[1] for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "")
    meta = {
        "command": " ".join(["tools/bench", *argv]), "date": datetime.datetime.now().astimezone()
        .isoformat(timespec="seconds"), "kernel": os.uname().release, "cpu": cpu,
        "cpus": os.cpu_count(), "git": git("rev-parse", "--short", "HEAD").strip() or "unknown",
        "uncommitted_files": len(git("status", "--porcelain").splitlines()),
        "seconds_per_test": p.seconds, "queues": " ".join(map(str, p.queue_counts)),
        "poll_us": " ".join(map(str, p.poll_values)), "streams": a.streams, "quick": a.quick,
        "g2g": a.g2g, "levers": a.levers, "rounds": p.rounds, "loadavg_start": loadavg(),
        "gso": not a.no_gso, "bin": str(bin_dir),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")


@dataclass
class WorldProcess:
    """One running world.sh and its two FIFOs (opened read-write: never blocking,
    whoever is at the other end)."""
    world: World
    proc: subprocess.Popen
    cmd_fd: int
    reply_fd: int
    pending: bytes = b""

    @classmethod
    def start(cls, w: World, command: list[str], env: dict[str, str], fifo_dir: Path,
              log: Path) -> "WorldProcess":
        base = fifo_dir / f"{w.path}-{w.queues}-{w.poll_us}-{w.config}"
        cmd_fifo, reply_fifo = Path(f"{base}.cmd"), Path(f"{base}.reply")
        os.mkfifo(cmd_fifo)
        os.mkfifo(reply_fifo)
        cmd_fd = os.open(cmd_fifo, os.O_RDWR)
        reply_fd = os.open(reply_fifo, os.O_RDWR)
        with open(log, "ab") as out:
            # The world opens its FIFOs by name and inherits none of ours, so a
            # vanished driver is an end-of-file to every world.
            proc = subprocess.Popen([*command, str(cmd_fifo), str(reply_fifo)], env=env,
                                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        return cls(w, proc, cmd_fd, reply_fd)

    def send(self, line: str) -> None:
        try:
            os.write(self.cmd_fd, (line + "\n").encode())
        except OSError:
            pass

    def reply(self, timeout: float, stop: "Interrupt") -> str | None:
        """The world's next line; None if it exits, the time runs out or we are interrupted."""
        deadline = time.monotonic() + timeout
        while not stop.flag:
            if b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                return line.decode(errors="replace")
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.reply_fd], [], [], min(left, 1.0))
            if ready:
                self.pending += os.read(self.reply_fd, 4096)
            elif self.proc.poll() is not None:
                # Its last words, if any, were read above; nothing more will come.
                return None
        return None

    def stop(self, interrupted: bool) -> None:
        self.send("quit")
        if interrupted:  # no waiting for the current test (the world's trap cleans up)
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait()
        os.close(self.cmd_fd)
        os.close(self.reply_fd)


@dataclass
class Interrupt:
    flag: bool = False

    def __call__(self, *_: object) -> None:
        self.flag = True


@dataclass
class Run:
    """One run's output: results.jsonl, progress.log and the logs directory."""
    out: Path
    plan: Plan
    world_command: list[str]
    world_env: dict[str, str]
    stop: Interrupt = field(default_factory=Interrupt)

    @property
    def results(self) -> Path:
        return self.out / "results.jsonl"

    def progress(self, line: str) -> None:
        print(line, flush=True)
        with open(self.out / "progress.log", "a") as f:
            f.write(line + "\n")

    def record_failure(self, w: World, index: int, round_: int, spec: str, why: str) -> None:
        name, variant, direction = spec.split(":")
        line = {"path": w.path, "queues": w.queues, "poll_us": w.poll_us, "config": w.config,
                "test": name, "variant": variant, "direction": direction, "round": round_,
                "seconds": self.plan.seconds, "ok": False, "error": why, "metrics": None}
        with open(self.results, "a") as f:
            f.write(json.dumps(line) + "\n")
        self.progress(f"[{index:3d}/{self.plan.total}] r{round_} {w.label} {name:<10} {variant:<7} "
                      f"{direction:<8} FAILED ({why}; see {self.out}/logs)")

    def start_world(self, w: World, fifo_dir: Path) -> WorldProcess | None:
        self.progress(f"building world: {w.path} {w.queues} {w.poll_us} {w.config}")
        env = {**self.world_env, **LEVER_ENV[w.config], "BENCH_CONFIG": w.config}
        command = [*self.world_command, w.path, str(w.queues), str(w.poll_us),
                   str(self.plan.seconds), str(self.results), str(self.out / "logs")]
        wp = WorldProcess.start(w, command, env, fifo_dir, self.out / "logs" / "driver.log")
        if wp.reply(120, self.stop) == "ready":
            return wp
        self.progress(f"world {w.path} {w.queues} {w.poll_us} {w.config} failed to build "
                      f"(logs: {self.out}/logs)")
        wp.stop(self.stop.flag)
        return None

    def run_test(self, live: dict[World, WorldProcess], w: World, index: int, round_: int,
                 spec: str) -> None:
        wp = live.get(w)
        if wp is None:
            self.record_failure(w, index, round_, spec, "world not running")
            return
        wp.send(f"run {index} {self.plan.total} {round_} {spec}")
        line = wp.reply(self.plan.seconds + 120, self.stop)
        if self.stop.flag:
            return  # that test was cut short
        if line is not None and line.startswith("done"):
            self.progress(line[len("done "):])
            return
        self.record_failure(w, index, round_, spec, "world stopped answering")
        wp.stop(False)
        del live[w]

    def run_queue_count(self, q: int, index: int) -> int:
        worlds = self.plan.worlds[q]
        live: dict[World, WorldProcess] = {}
        with tempfile.TemporaryDirectory(prefix="unetback-bench.") as fifo_dir:
            try:
                for w in worlds:
                    if self.stop.flag:
                        break
                    wp = self.start_world(w, Path(fifo_dir))
                    if wp is not None:
                        live[w] = wp
                for round_ in range(1, self.plan.rounds + 1):
                    for spec in self.plan.tests:
                        for w in worlds:
                            if self.stop.flag:
                                return index
                            if spec in self.plan.world_tests[w]:
                                self.run_test(live, w, index, round_, spec)
                                index += 1
            finally:
                for wp in live.values():
                    wp.stop(self.stop.flag)
        return index

    def run(self) -> None:
        self.results.write_text("")
        (self.out / "logs").mkdir(parents=True, exist_ok=True)
        nworlds = sum(len(ws) for ws in self.plan.worlds.values())
        self.progress(f"tools/bench: {nworlds} worlds, {self.plan.total // self.plan.rounds} tests per "
                      f"round x {self.plan.rounds} round(s), {self.plan.seconds}s each -> {self.out}")
        index = 1
        for q in self.plan.queue_counts:
            index = self.run_queue_count(q, index)
            if self.stop.flag:
                break


def run_micro(out: Path, bin_dir: Path, progress) -> None:
    for b in ("unetback_bench_rings", "unetback_bench_grant_copy", "unetback_bench_datapath"):
        exe = bin_dir / b
        if not os.access(exe, os.X_OK):
            progress(f"tools/bench: {exe} missing (build with UNETBACK_BENCHMARKS=ON)")
            continue
        progress(f"micro: {b}")
        subprocess.run([str(exe), "--benchmark_min_time=0.2", "--benchmark_format=json",
                        f"--benchmark_out={out}/micro-{b}.json", "--benchmark_out_format=json"],
                       stdout=subprocess.DEVNULL, check=False)


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    if a.report:
        return subprocess.call([sys.executable, str(KIT / "report.py"), a.report])
    try:
        p = plan(a)
        bin_dir = Path(a.bin)
        check_host(a, bin_dir)
    except UsageError as e:
        print(f"tools/bench: {e}", file=sys.stderr)
        return 2
    out = Path(a.out) if a.out else ROOT / "bench-results" / time.strftime("%Y%m%d-%H%M%S")
    (out / "logs").mkdir(parents=True, exist_ok=True)
    write_meta(out, argv, a, p, bin_dir)
    env = {**os.environ, "UNETBACK_BIN": str(bin_dir), "BENCH_NO_GSO": "1" if a.no_gso else "0",
           "BENCH_GUESTS": "2" if a.g2g else "1"}
    run = Run(out, p, ["bash", str(KIT / "world.sh")], env)
    signal.signal(signal.SIGINT, run.stop)
    signal.signal(signal.SIGTERM, run.stop)
    run.run()
    if a.micro and not run.stop.flag:
        run_micro(out, bin_dir, run.progress)
    meta = json.loads((out / "meta.json").read_text())
    meta["loadavg_end"] = loadavg()
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    subprocess.call([sys.executable, str(KIT / "report.py"), str(out)])
    if run.stop.flag:
        print(f"tools/bench: interrupted; partial results in {out}", file=sys.stderr)
        return 130
    print(f"tools/bench: done: {out}/results.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
