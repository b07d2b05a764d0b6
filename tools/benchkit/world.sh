#!/usr/bin/env bash
# One benchmark world, kept alive while tools/bench interleaves its tests with
# the other worlds' (so a unetback figure and its baselines are measured
# seconds apart, not minutes). It builds the world with tests/integration/lib.sh
# (host namespace + bridge; guest domain 1 in its own namespace; addresses in
# 198.18.0.0/15), answers "ready" on REPLY_FIFO, then serves commands read
# from CMD_FIFO, one per line:
#   run INDEX TOTAL ROUND NAME:VARIANT:DIRECTION   runs one test, appends one JSON
#       line to RESULTS, answers "done <progress line>"
#   quit                                            exits
# and removes everything on exit (lib.sh's cleanup, also on Ctrl-C).
#
#   world.sh PATH QUEUES POLL_US SECONDS RESULTS LOGDIR CMD_FIFO REPLY_FIFO
#   PATH: unetback | relay | veth
#   tests: NAME:VARIANT:DIRECTION, DIRECTION guest_tx, guest_rx or g2g (measure.sh),
#          e.g. TCP_STREAM:P4-l128:guest_rx (4 streams, 128-byte writes),
#          UDP_STREAM:64:guest_tx (datagram bytes), TCP_RR:64:guest_tx (message bytes),
#          IDLE:5:none (no traffic for 5 s: the daemon's CPU, wake-ups and RSS)
# BENCH_GUESTS=2 (tools/bench --g2g) adds guest domain 2 beside guest 1, on the
# same bridge and built the same way, for the g2g direction (measure.sh).
# Environment: UNETBACK_BIN (unetbackd, netfront-sim, sim-xenstored, sim-xl,
# unetbackctl, tap-relay), BENCH_POLL_FLAG (unetbackd's poll flag, --poll-us; it
# is always given, so POLL_US 0 is busy polling off),
# BENCH_NO_GSO=1 (no TSO on the TAPs: netfront-sim and tap-relay --no-gso),
# tools/bench --levers: BENCH_CONFIG (the lever setting's name, recorded as
# "config"; default base), BENCH_DAEMON_FLAGS / BENCH_GUEST_FLAGS (more flags
# of unetbackd / netfront-sim, split on spaces), BENCH_PIN_WORKERS=1 (the
# daemon's queue workers vif1.0-q<N> pinned to CPU N mod ncpu with taskset).

BENCH_PATH=$1 BENCH_QUEUES=$2 BENCH_POLL=$3 BENCH_SECS=$4
BENCH_RESULTS=$5 BENCH_LOGDIR=$6 BENCH_CMD=$7 BENCH_REPLY=$8
KIT=$(cd "$(dirname "$0")" && pwd)
source "$KIT/../../tests/integration/lib.sh"
source "$KIT/measure.sh"

DP_PIDS=()  # processes on the data path (their CPU time is reported)
RSS_BASE=0  # the data-path process's RSS (KiB) before any guest traffic or vif
BENCH_CONFIG=${BENCH_CONFIG:-base}
BENCH_GUESTS=${BENCH_GUESTS:-1}
WORLD_NAME="$BENCH_PATH-q$BENCH_QUEUES-poll$BENCH_POLL"
[[ $BENCH_CONFIG == base ]] || WORLD_NAME+="-$BENCH_CONFIG"
((BENCH_GUESTS == 1)) || WORLD_NAME+="-g2g"

bench_exit() {
  local rc=$?
  trap '' INT TERM  # a second signal must not cut the cleanup short
  set +e            # (exit "$rc") below must not trip errexit: it only hands rc to cleanup
  stop_server
  mkdir -p "$BENCH_LOGDIR/$WORLD_NAME" && cp -r "$LOGS"/. "$BENCH_LOGDIR/$WORLD_NAME/" 2>/dev/null
  (exit "$rc")
  cleanup
}
trap bench_exit EXIT

# The guests' domain ids: 1, and 2 in a guest-to-guest world.
guest_domids() { seq 1 "$BENCH_GUESTS"; }

# guest_addr_up DOMID: the guest interface's address, as start_guest leaves it.
guest_addr_up() {
  ip -n "$(guest_ns "$1")" addr add "$(guest_ip "$1")/24" dev eth0
  ip -n "$(guest_ns "$1")" link set eth0 up
}

build_unetback() {
  local flags=(--max-queues "$BENCH_QUEUES" "${BENCH_POLL_FLAG:---poll-us}" "$BENCH_POLL")
  local extra
  read -r -a extra <<<"${BENCH_DAEMON_FLAGS:-}"
  flags+=("${extra[@]}")
  start_xenstored
  start_host_ns
  start_daemon "${flags[@]}"
  DP_PIDS+=("${PIDS[-1]}")
  RSS_BASE=$(rss_kib "${PIDS[-1]}")
  local guest_flags=()
  ((${BENCH_NO_GSO:-0})) && guest_flags+=(--no-gso)
  read -r -a extra <<<"${BENCH_GUEST_FLAGS:-}"
  guest_flags+=("${extra[@]}")
  local d
  for d in $(guest_domids); do
    start_guest "$d" "$BENCH_QUEUES" "${guest_flags[@]}"
    DP_PIDS+=("${PIDS[-1]}")
  done
  ((${BENCH_PIN_WORKERS:-0})) && pin_workers "${DP_PIDS[0]}"
  [[ ${BENCH_CONFIG:-base} != direct ]] || pair_direct
  return 0
}

# pair_direct: the guests talk once through the bridge, so that it learns their
# MACs, and the daemon pairs their vifs on the direct path (docs/direct-path.md).
pair_direct() {
  ip netns exec "$(guest_ns 1)" ping -q -c 3 -i 0.2 "$(guest_ip 2)" >/dev/null ||
    fail "guest 1 cannot ping guest 2"
  wait_for 5 "the direct path vif1.0 <-> vif2.0" \
    grep -q "direct path vif1.0 <-> vif2.0: on" "$LOGS/unetbackd.log"
}

# worker_tids PID: "TID N" for each queue worker vif1.0-q<N> of the daemon PID.
worker_tids() {
  local t comm
  for t in /proc/"$1"/task/*; do
    comm=$(cat "$t/comm" 2>/dev/null) || continue
    if [[ $comm =~ ^vif1\.0-q([0-9]+)$ ]]; then echo "${t##*/} ${BASH_REMATCH[1]}"; fi
  done
  return 0
}

# pin_workers PID: each of the daemon's BENCH_QUEUES queue workers to its own
# CPU (queue N on CPU N mod the CPU count), once they all exist.
pin_workers() {
  local pid=$1 tid n ncpu
  ncpu=$(nproc)
  wait_for 10 "$BENCH_QUEUES queue workers" \
    test "$(worker_tids "$pid" | wc -l)" -ge "$BENCH_QUEUES"
  while read -r tid n; do
    taskset -p -c $((n % ncpu)) "$tid" >>"$LOGS/pinning.log" 2>&1 ||
      fail "taskset of worker q$n (thread $tid)"
  done < <(worker_tids "$pid")
}

# Baseline (a): the same two TAPs per guest, relayed by tap-relay (one per guest).
build_relay() {
  local flags=() d
  ((${BENCH_NO_GSO:-0})) && flags+=(--no-gso)
  start_host_ns
  for d in $(guest_domids); do
    add_guest_ns "$d"
    start_bg "tap-relay-$d" ip netns exec "$HOST_NS" "$UNETBACK_BIN/tap-relay" \
      --host-ifname "vif$d.0" --guest-netns "$(guest_ns "$d")" --bridge "$BRIDGE" \
      --queues "$BENCH_QUEUES" --guest-mac "$(guest_mac "$d")" \
      --ready-file "$WORLD/relay$d.ready" "${flags[@]}"
    DP_PIDS+=("${PIDS[-1]}")
    wait_for 10 "tap-relay $d ready" test -f "$WORLD/relay$d.ready"
    guest_addr_up "$d"
  done
  RSS_BASE=0  # (the relay opens its TAPs before it is ready)
}

# Baseline (b): a veth pair between the host and each guest namespace (kernel only).
build_veth() {
  local d
  start_host_ns
  for d in $(guest_domids); do
    add_guest_ns "$d"
    ip -n "$HOST_NS" link add "vif$d.0" numtxqueues "$BENCH_QUEUES" \
      numrxqueues "$BENCH_QUEUES" type veth peer name eth0 netns "$(guest_ns "$d")" \
      numtxqueues "$BENCH_QUEUES" numrxqueues "$BENCH_QUEUES"
    ip -n "$HOST_NS" link set "vif$d.0" address fe:ff:ff:ff:ff:ff master "$BRIDGE" up
    ip -n "$(guest_ns "$d")" link set eth0 address "$(guest_mac "$d")"
    guest_addr_up "$d"
  done
}

primary_metric() {
  case $1 in
    TCP_STREAM) echo gbps ;;
    UDP_STREAM) echo rx_kpps ;;
    IDLE) echo idle_cpu_pct ;;
    *) echo tps ;;
  esac
}

# run_one NAME VARIANT DIRECTION: prints the metrics JSON (non-zero on failure).
run_one() {
  local name=$1 variant=$2 dir=$3
  case $name in
    TCP_STREAM)
      local streams=${variant%%-*} len=0
      streams=${streams#P}
      [[ $variant == *-l* ]] && len=${variant##*-l}
      measure_tcp_stream "$dir" "$BENCH_SECS" "$streams" "$len" ;;
    UDP_STREAM) measure_udp_stream "$dir" "$BENCH_SECS" "$variant" ;;
    TCP_RR) measure_rr tcp "$dir" "$BENCH_SECS" "$variant" ;;
    UDP_RR) measure_rr udp "$dir" "$BENCH_SECS" "$variant" ;;
    IDLE)
      if ((${#DP_PIDS[@]} == 0)); then
        echo '{"idle_cpu_pct": null}'  # veth: no process on the path
      else
        measure_idle "$variant" "$BENCH_QUEUES" "$RSS_BASE" "${DP_PIDS[@]}"
      fi ;;
    *) log "unknown test $name"; return 1 ;;
  esac
}

# The same test's primary figure measured through tap-relay in this round, if any.
relay_figure() {  # relay_figure NAME VARIANT DIR METRIC ROUND
  [[ -s "$BENCH_RESULTS" ]] || return 0
  jq -rs --arg t "$1" --arg v "$2" --arg d "$3" --arg m "$4" --argjson r "$5" \
    --argjson q "$BENCH_QUEUES" \
    'map(select(.path == "relay" and .ok and .queues == $q and .test == $t and
                .variant == $v and .direction == $d and .round == $r))
     | last | .metrics[$m] // empty' "$BENCH_RESULTS"
}

# progress INDEX TOTAL ROUND NAME VARIANT DIR METRICS_JSON|"": one line for the driver.
progress() {
  local line m value ratio=""
  local path=$BENCH_PATH
  [[ $BENCH_CONFIG == base ]] || path+=":$BENCH_CONFIG"
  line=$(printf '[%3d/%d] r%d %-8s q=%d poll=%-3s %-10s %-7s %-8s' "$1" "$2" "$3" \
    "$path" "$BENCH_QUEUES" "$BENCH_POLL" "$4" "$5" "$6")
  if [[ -z "$7" ]]; then
    echo "$line FAILED (logs: $BENCH_LOGDIR/$WORLD_NAME)"
    return
  fi
  m=$(primary_metric "$4")
  value=$(echo "$7" | jq -r --arg m "$m" '.[$m] | if . == null then "n/a" else . * 1000 | round / 1000 end')
  if [[ $BENCH_PATH != relay ]]; then
    local base
    base=$(relay_figure "$4" "$5" "$6" "$m" "$3")
    [[ -n "$base" && $value != n/a ]] && ratio=$(jq -rn --argjson a "$value" --argjson b "$base" \
      'if $b > 0 then "  (\($a / $b * 100 | round / 100)x tap-relay)" else "" end')
  fi
  echo "$line $value $m$ratio"
}

# run_test INDEX TOTAL ROUND NAME:VARIANT:DIRECTION: measures, records, prints progress.
run_test() {
  local name variant dir metrics ok t0 t1 c0 c1 cpu
  IFS=: read -r name variant dir <<<"$4"
  local q0="" q1
  [[ $BENCH_PATH == unetback ]] && q0=$(queue_packets 2>/dev/null || true)
  c0=$(cpu_ticks "${DP_PIDS[@]}") t0=$(date +%s.%N)
  if metrics=$(run_one "$name" "$variant" "$dir"); then ok=true; else ok=false metrics=""; fi
  c1=$(cpu_ticks "${DP_PIDS[@]}") t1=$(date +%s.%N)
  # unetback: what the daemon itself moved, per queue, over the test's seconds
  # (and its kicks, events and grant-copy calls per packet).
  if [[ -n "$q0" && -n "$metrics" && $name != IDLE ]] && q1=$(queue_packets 2>/dev/null); then
    metrics=$(jq -cn --argjson a "$metrics" --argjson b "$(datapath_rates "$q0" "$q1" \
      "$BENCH_SECS")" '$a + $b')
  fi
  cpu=$(jq -n --argjson c "$((c1 - c0))" --argjson t0 "$t0" --argjson t1 "$t1" \
    --argjson hz "$(getconf CLK_TCK)" '$c / $hz / ($t1 - $t0) * 100 | round')
  jq -cn --arg path "$BENCH_PATH" --argjson q "$BENCH_QUEUES" --argjson poll "$BENCH_POLL" \
    --arg config "$BENCH_CONFIG" --arg t "$name" --arg v "$variant" --arg d "$dir" --argjson ok "$ok" --argjson r "$3" \
    --argjson secs "$BENCH_SECS" --argjson cpu "$cpu" --argjson m "${metrics:-null}" \
    '{path: $path, queues: $q, poll_us: $poll, config: $config, test: $t, variant: $v,
      direction: $d, round: $r, seconds: $secs, ok: $ok,
      datapath_cpu_pct: (if $path == "veth" then null else $cpu end), metrics: $m}' \
    >>"$BENCH_RESULTS"
  progress "$1" "$2" "$3" "$name" "$variant" "$dir" "$metrics"
}

# Opened read-write: never blocks, and the driver (the other end) may come and go.
exec {reply_fd}<>"$BENCH_REPLY"
case $BENCH_PATH in
  unetback) build_unetback ;;
  relay) build_relay ;;
  veth) build_veth ;;
  *) fail "unknown path $BENCH_PATH" ;;
esac
echo ready >&"$reply_fd"
exec {cmd_fd}<"$BENCH_CMD"
while read -r -u "$cmd_fd" verb index total round spec; do
  case $verb in
    run) echo "done $(run_test "$index" "$total" "$round" "$spec")" >&"$reply_fd" ;;
    quit) break ;;
  esac
done
