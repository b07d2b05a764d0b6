# shellcheck shell=bash
# Measurements of the benchmark suite (sourced by tools/benchkit/world.sh after
# tests/integration/lib.sh, whose HOST_NS, HOST_IP, guest_ns, guest_ip, LOGS
# and wait_for it uses). Each measure_* prints one JSON object of metrics on
# stdout, or returns non-zero after logging why. The guest is domain 1.
#
# Directions are named from the guest's side, as the daemon's counters:
#   guest_tx: guest -> host (the guest's netfront transmits)
#   guest_rx: host -> guest
#   g2g:      guest 1 -> guest 2 on the same bridge (a world with BENCH_GUESTS=2)

BENCH_IPERF_PORT=5201
BENCH_SOCKPERF_PORT=11111
SERVER_PID=""

# listening NS PROTO PORT: true once a socket listens on PORT (tcp or udp) in NS.
listening() {
  local flag=-Hltn
  [[ $2 == udp ]] && flag=-Hlun
  [[ -n "$(ip netns exec "$1" ss "$flag" "sport = :$3")" ]]
}

# start_server NS PROTO PORT LOGNAME COMMAND...: a one-shot server in NS.
start_server() {
  local ns=$1 proto=$2 port=$3 name=$4
  shift 4
  ip netns exec "$ns" "$@" >"$LOGS/$name.log" 2>&1 &
  SERVER_PID=$!
  wait_for 10 "$name listening" listening "$ns" "$proto" "$port"
}

stop_server() {
  [[ -n "$SERVER_PID" ]] || return 0
  # Our own child (a one-shot server): it may have exited already.
  kill -TERM "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# test_ends DIRECTION: the client's namespace, the server's namespace and
# address, into CLIENT_NS, SERVER_NS, SERVER_IP: guest 1 is the client of the
# host, or of guest 2 for g2g (bulk guest_rx keeps these ends and reverses
# the data with -R; measure_rr swaps them).
test_ends() {
  CLIENT_NS=$(guest_ns 1) SERVER_NS=$HOST_NS SERVER_IP=$HOST_IP
  if [[ $1 == g2g ]]; then
    SERVER_NS=$(guest_ns 2) SERVER_IP=$(guest_ip 2)
  fi
}

# iperf3_json DIRECTION SECONDS [iperf3 flags...]: client in guest 1, server in
# the host namespace (guest 2's for g2g); guest_rx adds -R (the server sends).
# Prints the JSON.
iperf3_json() {
  local dir=$1 secs=$2
  shift 2
  test_ends "$dir"
  local flags=(-c "$SERVER_IP" -p "$BENCH_IPERF_PORT" -t "$secs" -J "$@")
  [[ $dir == guest_rx ]] && flags+=(-R)
  start_server "$SERVER_NS" tcp "$BENCH_IPERF_PORT" iperf3-server \
    iperf3 -s -1 -B "$SERVER_IP" -p "$BENCH_IPERF_PORT"
  local out rc=0
  out=$(timeout $((secs + 30)) ip netns exec "$CLIENT_NS" iperf3 "${flags[@]}") || rc=$?
  stop_server
  if ((rc != 0)); then
    log "iperf3 ${flags[*]} failed (rc $rc): $(echo "$out" | jq -r '.error // empty' 2>/dev/null)"
    return 1
  fi
  echo "$out"
}

# measure_tcp_stream DIRECTION SECONDS STREAMS WRITE_BYTES(0 = iperf3 default)
measure_tcp_stream() {
  local dir=$1 secs=$2 streams=$3 len=$4 json
  local flags=(-P "$streams")
  ((len > 0)) && flags+=(-l "$len")
  json=$(iperf3_json "$dir" "$secs" "${flags[@]}") || return 1
  echo "$json" | jq -c '{gbps: (.end.sum_received.bits_per_second / 1e9),
                          retransmits: (.end.sum_sent.retransmits // 0)}'
}

# measure_udp_stream DIRECTION SECONDS DATAGRAM_BYTES: unlimited rate (-b 0).
measure_udp_stream() {
  local dir=$1 secs=$2 len=$3 json
  json=$(iperf3_json "$dir" "$secs" -u -b 0 -l "$len") || return 1
  echo "$json" | jq -c '.end as $e |
    {rx_kpps: (($e.sum_received.packets - $e.sum_received.lost_packets)
               / $e.sum_received.seconds / 1e3),
     tx_kpps: ($e.sum_sent.packets / $e.sum_sent.seconds / 1e3),
     loss_pct: $e.sum_received.lost_percent,
     rx_gbps: ($e.sum_received.bits_per_second / 1e9)}'
}

# measure_rr PROTO(tcp|udp) DIRECTION SECONDS MSG_BYTES: sockperf ping-pong.
# guest_tx: the guest is the client (it sends each request first); guest_rx:
# the host is the client; g2g: guest 1 is the client of guest 2.
# Transactions/s over sockperf's valid duration, and round-trip percentiles
# (sockperf reports RTT/2 per sample: doubled here).
measure_rr() {
  local proto=$1 dir=$2 secs=$3 msg=$4
  test_ends "$dir"
  local server_ns=$SERVER_NS client_ns=$CLIENT_NS server_ip=$SERVER_IP
  if [[ $dir == guest_rx ]]; then
    server_ns=$(guest_ns 1) client_ns=$HOST_NS server_ip=$(guest_ip 1)
  fi
  local tcp=()
  [[ $proto == tcp ]] && tcp=(--tcp)
  start_server "$server_ns" "$proto" "$BENCH_SOCKPERF_PORT" sockperf-server \
    sockperf sr -i "$server_ip" -p "$BENCH_SOCKPERF_PORT" "${tcp[@]}"
  local out rc=0
  out=$(timeout $((secs + 30)) ip netns exec "$client_ns" sockperf pp -i "$server_ip" \
    -p "$BENCH_SOCKPERF_PORT" "${tcp[@]}" -t "$secs" -m "$msg" 2>&1) || rc=$?
  stop_server
  echo "$out" >"$LOGS/sockperf-client.log"
  if ((rc != 0)); then
    log "sockperf pp $proto $dir failed (rc $rc): $(echo "$out" | tail -n 3)"
    return 1
  fi
  echo "$out" | sed 's/\x1b\[[0-9;]*m//g' | awk '
    /\[Valid Duration\]/ { for (i = 1; i <= NF; i++) {
        if ($i ~ /^RunTime=/) { split($i, a, "="); t = a[2] + 0 }
        if ($i ~ /^ReceivedMessages=/) { split($i, a, "="); n = a[2] + 0 } } }
    /percentile 50.000/ { p50 = $NF }
    /percentile 99.000/ { p99 = $NF }
    END { if (t <= 0 || n <= 0) exit 1
          printf "{\"tps\":%.1f,\"p50_us\":%.3f,\"p99_us\":%.3f}\n", n / t, 2 * p50, 2 * p99 }'
}

# cpu_ticks PID...: utime+stime clock ticks of the live processes among PIDs.
cpu_ticks() {
  local sum=0 pid f
  for pid in "$@"; do
    [[ -r /proc/$pid/stat ]] || continue
    # Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
    f=$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{print $12 + $13}') || continue
    sum=$((sum + f))
  done
  echo "$sum"
}

# task_stats PID: "RUN_NS CTXT_SWITCHES" summed over the threads of PID
# (/proc/PID/task/*/schedstat: ns on the CPU; status: voluntary + involuntary
# context switches). Nanosecond CPU accounting, unlike the 10 ms ticks of stat.
task_stats() {
  local ns=0 cs=0 t a b
  for t in /proc/"$1"/task/*; do
    read -r a _ <"$t/schedstat" 2>/dev/null || continue
    b=$(awk '/ctxt_switches/ {s += $2} END {print s + 0}' "$t/status" 2>/dev/null) || b=0
    ns=$((ns + a)) cs=$((cs + b))
  done
  echo "$ns $cs"
}

# rss_kib PID: resident memory of PID in KiB.
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# measure_idle SECONDS QUEUES BASE_RSS_KIB PID [PEER_PID]: no traffic for SECONDS
# (the guest stays connected). The CPU of PID (the daemon; tap-relay for (a)) in %
# of one core, its wake-ups per second (context switches of all its threads), its
# RSS, and the RSS per queue above BASE_RSS_KIB (the RSS before the guest
# connected). PEER_PID: netfront-sim, reported as peer_idle_cpu_pct.
measure_idle() {
  local secs=$1 queues=$2 base=$3 pid=$4 peer=${5:-} s0 s1 p0=(0 0) p1=(0 0) t0 t1 rss
  read -r -a s0 <<<"$(task_stats "$pid")"
  [[ -n "$peer" ]] && read -r -a p0 <<<"$(task_stats "$peer")"
  t0=$(date +%s.%N)
  sleep "$secs"
  read -r -a s1 <<<"$(task_stats "$pid")"
  [[ -n "$peer" ]] && read -r -a p1 <<<"$(task_stats "$peer")"
  t1=$(date +%s.%N)
  rss=$(rss_kib "$pid") || { log "no /proc/$pid/status"; return 1; }
  jq -cn --argjson ns "$((s1[0] - s0[0]))" --argjson cs "$((s1[1] - s0[1]))" \
    --argjson pns "$((p1[0] - p0[0]))" --argjson t0 "$t0" --argjson t1 "$t1" \
    --argjson rss "$rss" --argjson base "$base" --argjson q "$queues" \
    '($t1 - $t0) as $dt |
     {idle_cpu_pct: ($ns / 1e9 / $dt * 100), wakeups_per_s: ($cs / $dt),
      peer_idle_cpu_pct: ($pns / 1e9 / $dt * 100), rss_kib: $rss, rss_base_kib: $base,
      rss_per_queue_kib: (($rss - $base) / $q)}'
}

# queue_packets: "TX RX NOTIFY EVENTS COPY_CALLS" per queue of the bench guest's
# vif (one line per queue), from the daemon's counters (unetbackctl stats --json):
# packets each way, event-channel kicks sent to the frontend, events received,
# batched grant-copy calls.
queue_packets() {
  ctl stats vif1.0 --json |
    jq -r '.[0].queues[] | .counters | "\(.tx_packets // 0) \(.rx_packets // 0)" +
      " \(.notify_sent // 0) \(.events_received // 0) \(.grant_copy_calls // 0)"'
}

# datapath_rates BEFORE AFTER SECONDS: the packets the daemon moved per queue
# between two queue_packets snapshots, as kpps over SECONDS: totals and the
# busiest queue, both directions; and per packet moved (both directions), the
# kicks it sent, the events it received and its grant-copy calls.
datapath_rates() {
  paste -d' ' <(echo "$1") <(echo "$2") | jq -Rn --argjson s "$3" '
    def per_pkt($n; $p): if $p > 0 then $n / $p else null end;
    [inputs | split(" ") | map(tonumber) | {tx: ((.[5] - .[0]) / $s / 1e3),
                                            rx: ((.[6] - .[1]) / $s / 1e3),
                                            pkts: ((.[5] - .[0]) + (.[6] - .[1])),
                                            notify: (.[7] - .[2]), events: (.[8] - .[3]),
                                            copies: (.[9] - .[4])}] |
    (map(.pkts) | add) as $p |
    {dp_guest_tx_kpps: (map(.tx) | add), dp_guest_tx_kpps_max_queue: (map(.tx) | max),
     dp_guest_rx_kpps: (map(.rx) | add), dp_guest_rx_kpps_max_queue: (map(.rx) | max),
     dp_notify_per_pkt: per_pkt(map(.notify) | add; $p),
     dp_events_per_pkt: per_pkt(map(.events) | add; $p),
     dp_copy_calls_per_pkt: per_pkt(map(.copies) | add; $p)}'
}
