#!/usr/bin/env bash
# Where unetbackd's time goes under one benchmark load: builds a unetback world
# (tests/integration/lib.sh: sim-xenstored, unetbackd, one netfront-sim guest,
# as tools/bench does), starts one iperf3 load, and records unetbackd (and,
# separately, netfront-sim) with `perf record -g` while it runs. Root only.
#
#   tools/benchkit/profile.sh [--queues Q] [--seconds S] [--out DIR] LOAD
#   LOAD: udp64-tx | udp64-rx | tcp-tx | tcp-rx | idle
#
# Output in DIR (default bench-results/profile-<load>-<time>/): unetbackd.perf.data,
# netfront-sim.perf.data, unetbackd.txt and netfront-sim.txt (perf report
# --no-children, top entries), threads.txt (per-thread CPU of both), per-packet.json
# (packets/s the daemon moved, per queue; CPU % and ns of CPU per packet of the
# daemon and of netfront-sim while perf recorded), logs/.
# Binaries: $UNETBACK_BIN (default build/release/bin; use a build with symbols,
# e.g. RelWithDebInfo, for readable stacks).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
queues=1 secs=8 out="" load=""
while (($#)); do
  case "$1" in
    --queues) queues=$2; shift ;;
    --seconds) secs=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    udp64-tx | udp64-rx | tcp-tx | tcp-rx | idle) load=$1 ;;
    *) echo "profile.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ -n "$load" ]] || { echo "profile.sh: which LOAD? (see --help)" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "profile.sh: needs root" >&2; exit 2; }
command -v perf >/dev/null || { echo "profile.sh: perf missing (apt-get install linux-perf)" >&2; exit 2; }
export UNETBACK_BIN=${UNETBACK_BIN:-$ROOT/build/release/bin}
out=$(realpath -m "${out:-$ROOT/bench-results/profile-$load-$(date +%H%M%S)}")
mkdir -p "$out"

source "$ROOT/tests/integration/lib.sh"
source "$ROOT/tools/benchkit/measure.sh"
trap 'rc=$?; mkdir -p "$out/logs"; cp -r "$LOGS"/. "$out/logs/" 2>/dev/null; (exit $rc); cleanup' EXIT

start_xenstored
start_host_ns
start_daemon --max-queues "$queues"
daemon=${PIDS[-1]}
start_guest 1 "$queues"
guest=${PIDS[-1]}

case $load in
  udp64-tx) iperf3_json guest_tx "$((secs + 2))" -u -b 0 -l 64 >"$out/load.json" & ;;
  udp64-rx) iperf3_json guest_rx "$((secs + 2))" -u -b 0 -l 64 >"$out/load.json" & ;;
  tcp-tx) iperf3_json guest_tx "$((secs + 2))" >"$out/load.json" & ;;
  tcp-rx) iperf3_json guest_rx "$((secs + 2))" >"$out/load.json" & ;;
  idle) : ;;
esac
load_pid=$!
sleep 1
read -r -a d0 <<<"$(task_stats "$daemon")"
read -r -a g0 <<<"$(task_stats "$guest")"
q0=$(queue_packets)
perf record -g -o "$out/unetbackd.perf.data" -p "$daemon" -- sleep "$secs" 2>"$out/perf-daemon.log" &
rec1=$!
perf record -g -o "$out/netfront-sim.perf.data" -p "$guest" -- sleep "$secs" 2>"$out/perf-guest.log" &
rec2=$!
sleep $((secs / 2))
for pid in "$daemon" "$guest"; do
  ps -L -o pid,tid,pcpu,comm -p "$pid"
done >"$out/threads.txt"
wait "$rec1" "$rec2"
read -r -a d1 <<<"$(task_stats "$daemon")"
read -r -a g1 <<<"$(task_stats "$guest")"
q1=$(queue_packets)
# Per packet: the daemon's and netfront-sim's CPU (all threads, kernel time
# included: a TAP write runs the bridge and the receiver's stack) over the
# packets the daemon's counters moved in both directions.
datapath_rates "$q0" "$q1" "$secs" | jq -c --argjson d "$((d1[0] - d0[0]))" \
  --argjson g "$((g1[0] - g0[0]))" --argjson s "$secs" '. + {
    daemon_cpu_pct: ($d / 1e9 / $s * 100), netfront_cpu_pct: ($g / 1e9 / $s * 100),
    daemon_ns_per_packet: (if (.dp_guest_tx_kpps + .dp_guest_rx_kpps) > 0
      then $d / (($s * 1e3) * (.dp_guest_tx_kpps + .dp_guest_rx_kpps)) else null end),
    netfront_ns_per_packet: (if (.dp_guest_tx_kpps + .dp_guest_rx_kpps) > 0
      then $g / (($s * 1e3) * (.dp_guest_tx_kpps + .dp_guest_rx_kpps)) else null end)}' \
  >"$out/per-packet.json"
[[ $load == idle ]] || wait "$load_pid" || true  # the load (not the world's processes)
for p in unetbackd netfront-sim; do
  perf report -i "$out/$p.perf.data" --no-children --stdio --percent-limit 1.5 \
    --sort comm,dso,symbol -g none 2>/dev/null | grep -v '^$' >"$out/$p.txt" || true
done
if [[ -s "$out/load.json" ]]; then
  jq -c '.end | {sent_pps: ((.sum_sent.packets // 0) / (.sum_sent.seconds // 1)),
                 received_bps: (.sum_received.bits_per_second // .sum.bits_per_second)}' \
    "$out/load.json" >"$out/load-summary.json" || true
fi
echo "profile.sh: $out/unetbackd.txt $out/netfront-sim.txt"
