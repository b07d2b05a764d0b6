# shellcheck shell=bash
# Shared helpers for the integration tier: each test builds its own world in a temp
# dir (sim-xenstored, unetbackd in a "host" network namespace with a bridge, one
# netfront-sim per guest in its own namespace) and tears all of it down on exit,
# also on failure. Addresses come from 198.18.0.0/15 (the benchmarking range).
#
# Required environment (set by CMake): UNETBACK_BIN (folder with unetbackd,
# netfront-sim, sim-xenstored, sim-xl). Optional: UNETBACK_KEEP_WORLD=1 keeps
# the world's folder (logs) after the test, for debugging.
set -euo pipefail

: "${UNETBACK_BIN:?set UNETBACK_BIN to the build folder with the binaries}"
WORLD=$(mktemp -d /tmp/unetback-it.XXXXXX)
ID=$(printf '%04x' $((RANDOM % 65536)))
HOST_NS="ubh-$ID"
BRIDGE="ubr0"
HOST_IP="198.18.0.1"
XS_DIR="$WORLD/xenstore"
SIM_DIR="$WORLD/sim"
LOGS="$WORLD/logs"
PIDS=()
GUEST_NS=()
mkdir -p "$XS_DIR" "$SIM_DIR" "$LOGS"
export XENSTORED_PATH="$XS_DIR/socket"

log() { printf '[%s] %s\n' "$(date +%T.%3N)" "$*" >&2; }
fail() {
  log "FAIL: $*"
  dump_logs
  exit 1
}
dump_logs() {
  for f in "$LOGS"/*.log; do
    [[ -f "$f" ]] || continue
    echo "----- $(basename "$f") (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}

cleanup() {
  local rc=$?
  set +e
  # Newest first (guests, then the daemon, then xenstored), each gone before
  # the next is asked, so the daemon can still walk its vifs to Closed.
  local i pid deadline
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    pid=${PIDS[i]}
    kill -TERM "$pid" 2>/dev/null
    deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  for ns in "${GUEST_NS[@]}" "$HOST_NS"; do ip netns del "$ns" 2>/dev/null; done
  ((rc == 0)) || dump_logs
  [[ -n "${UNETBACK_KEEP_WORLD:-}" ]] || rm -rf "$WORLD"
  exit $rc
}
trap cleanup EXIT

# forget_pid PID: reaps a process that exited (or was stopped) and drops it
# from the cleanup list, so that the exit never signals a recycled pid.
forget_pid() {
  local p kept=()
  wait "$1" 2>/dev/null || true
  for p in "${PIDS[@]}"; do [[ $p == "$1" ]] || kept+=("$p"); done
  PIDS=("${kept[@]}")
}
trap 'exit 130' INT TERM

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds.
wait_for() {
  local timeout=$1 what=$2
  shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out after ${timeout}s waiting for $what"
    sleep 0.1
  done
}

start_bg() {  # start_bg NAME COMMAND...: runs COMMAND in the background, logs to $LOGS/NAME.log
  local name=$1
  shift
  "$@" >"$LOGS/$name.log" 2>&1 &
  PIDS+=($!)
  log "started $name (pid $!)"
}

start_xenstored() {
  start_bg sim-xenstored "$UNETBACK_BIN/sim-xenstored" --dir "$XS_DIR"
  wait_for 10 "sim-xenstored socket" test -S "$XS_DIR/socket"
}

start_host_ns() {
  ip netns add "$HOST_NS"
  ip -n "$HOST_NS" link set lo up
  bridge_nf_call 0
  ip -n "$HOST_NS" link add "$BRIDGE" type bridge
  ip -n "$HOST_NS" addr add "$HOST_IP/24" dev "$BRIDGE"
  ip -n "$HOST_NS" link set "$BRIDGE" up
}

# bridge_nf_call 0|1: whether br_netfilter, where the module is loaded, hands
# the host namespace's bridged frames to ip/ip6/arptables (per namespace; a
# new one starts with the module's defaults, on). The worlds have no firewall.
bridge_nf_call() {
  local f
  for f in /proc/sys/net/bridge/bridge-nf-call-{iptables,ip6tables,arptables}; do
    ip netns exec "$HOST_NS" sh -c "[ ! -e $f ] || echo $1 > $f"
  done
}

# start_daemon [unetbackd flags...]: the daemon runs in the host namespace.
start_daemon() {
  start_bg unetbackd ip netns exec "$HOST_NS" "$UNETBACK_BIN/unetbackd" --platform sim \
    --sim-dir "$SIM_DIR" --xenstore "$XS_DIR/socket" --control-socket "$WORLD/ctl.sock" \
    --state-dir "$WORLD/state" "$@"
  wait_for 10 "unetbackd control socket" test -S "$WORLD/ctl.sock"
}

ctl() { "$UNETBACK_BIN/unetbackctl" --socket "$WORLD/ctl.sock" "$@"; }

# queue_counter VIF QUEUE COUNTER: one per-queue counter of the daemon.
queue_counter() {
  ctl stats "$1" --json | jq -r ".[0].queues[] | select(.queue == $2) | .counters.$3"
}

# assert_all_queues_moved VIF QUEUES: every queue carried packets both ways.
assert_all_queues_moved() {
  local vif=$1 queues=$2 q tx rx
  for ((q = 0; q < queues; q++)); do
    tx=$(queue_counter "$vif" "$q" tx_packets)
    rx=$(queue_counter "$vif" "$q" rx_packets)
    log "$vif queue $q: tx_packets=$tx rx_packets=$rx"
    ((tx > 0)) || fail "$vif queue $q carried no guest TX packets"
    ((rx > 0)) || fail "$vif queue $q carried no guest RX packets"
  done
}

# iperf3_run GUEST_DOMID SECONDS [iperf3 client flags...]: client in the guest,
# server in the host namespace. Prints received Mbit/s.
iperf3_run() {
  local domid=$1 secs=$2
  shift 2
  ip netns exec "$HOST_NS" iperf3 -s -1 -B "$HOST_IP" >"$LOGS/iperf3-server.log" 2>&1 &
  local server=$!
  sleep 0.3
  local json
  json=$(ip netns exec "$(guest_ns "$domid")" iperf3 -c "$HOST_IP" -t "$secs" -J "$@") ||
    { kill "$server" 2>/dev/null; fail "iperf3 $* failed: $json"; }
  wait "$server" 2>/dev/null || true
  echo "$json" | jq -r '.end.sum_received.bits_per_second / 1e6 | floor'
}

xl() { ip netns exec "$HOST_NS" "$UNETBACK_BIN/sim-xl" --xenstore "$XS_DIR/socket" "$@"; }

# attach_guest DOMID QUEUES [netfront-sim flags...]: `xl network-attach` (with
# the extra vifspec keys in $GUEST_VIFSPEC, e.g. "mtu=9000"), then the guest's
# netfront probes the new device; waits for both ends to be Connected and
# configures the guest's eth0 (MTU from the vifspec, if given).
attach_guest() {
  local domid=$1 queues=$2
  shift 2
  local ns mtu
  ns=$(guest_ns "$domid")
  mtu=$(grep -o 'mtu=[0-9]*' <<<"${GUEST_VIFSPEC:-}" | cut -d= -f2 || true)
  # shellcheck disable=SC2086  # GUEST_VIFSPEC: vifspec keys, split into words on purpose
  xl network-attach "$domid" bridge="$BRIDGE" mac="$(guest_mac "$domid")" \
    ${GUEST_VIFSPEC:-}
  start_bg "netfront-sim-$domid" "$UNETBACK_BIN/netfront-sim" --domid "$domid" \
    --xenstore-dir "$XS_DIR" --sim-dir "$SIM_DIR" --devid 0 --queues "$queues" \
    --netns "$ns" --ifname eth0 ${mtu:+--mtu "$mtu"} "$@"
  wait_for 20 "guest $domid connected" guest_connected "$domid"
  wait_for 5 "guest $domid eth0" ip -n "$ns" link show eth0
  [[ -z "$mtu" ]] || ip -n "$ns" link set eth0 mtu "$mtu"
  ip -n "$ns" addr replace "$(guest_ip "$domid")/24" dev eth0
  ip -n "$ns" link set eth0 up
}

# start_guest DOMID QUEUES [netfront-sim flags...]: a new guest domain with its
# own network namespace and one vif (see attach_guest).
start_guest() {
  local domid=$1
  add_guest_ns "$domid"
  xl domain-create "$domid"
  attach_guest "$@"
}

# netfront_pid DOMID: the newest netfront-sim process of that guest in this
# world (other worlds, e.g. a concurrently running tier, have other XS_DIRs).
netfront_pid() { pgrep -n -f "netfront-sim --domid $1 --xenstore-dir $XS_DIR( |$)"; }

guest_ns() { echo "ubg-$ID-$1"; }
guest_ip() { echo "198.18.0.$((10 + $1))"; }
guest_mac() { printf '00:16:3e:00:00:%02x' "$1"; }

# add_guest_ns DOMID: the guest's network namespace, removed by cleanup.
add_guest_ns() {
  local ns
  ns=$(guest_ns "$1")
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  GUEST_NS+=("$ns")
}

# BACKEND_DOMID: the domain serving the vifs (a driver domain; default dom0).
guest_connected() {
  [[ "$(xenstore-read "/local/domain/${BACKEND_DOMID:-0}/backend/vif/$1/0/state")" == 4 ]] &&
    [[ "$(xenstore-read "/local/domain/$1/device/vif/0/state")" == 4 ]]
}

# ---- leak checks (tests/soak, test_peer_failures.sh) ----------------------

# daemon_pid: the unetbackd of this world (`ip netns exec` execs, so it is the
# pid start_daemon recorded).
daemon_pid() { pgrep -n -f "unetbackd --platform sim --sim-dir $SIM_DIR"; }

# daemon_resources: one machine-readable line describing what the daemon
# holds now: open fds, threads, mappings of guest memory (the sim platform's
# grant mappings: /proc/PID/maps lines of the guests' memfds), vif TAPs in
# the host namespace, XenStore watches of its connection (sim-xenstored's
# `xs-control watches`, tests/tools/xs-control) and resident memory in KiB.
daemon_resources() {
  local pid fds threads maps taps watches rss
  pid=$(daemon_pid) || fail "unetbackd is not running"
  [[ -x "$UNETBACK_BIN/xs-control" ]] || fail "xs-control not built ($UNETBACK_BIN/xs-control)"
  fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  threads=$(find "/proc/$pid/task" -mindepth 1 -maxdepth 1 | wc -l)
  maps=$(grep -c 'unetback-sim-dom' "/proc/$pid/maps" || true)
  taps=$(ip -n "$HOST_NS" -o link show | grep -c ': vif[0-9]' || true)
  watches=$("$UNETBACK_BIN/xs-control" watches | awk -v p="$pid" '$6 == p { n += $8 } END { print n + 0 }')
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
  echo "fds=$fds threads=$threads guest_maps=$maps taps=$taps xs_watches=$watches rss_kb=$rss"
}

# resource_value LINE KEY: one value of a daemon_resources line.
resource_value() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }

# assert_no_leaks BASELINE [WHAT [KEYS...]]: the daemon holds exactly the
# fds, threads, guest mappings, TAPs and watches (or only KEYS) of BASELINE (a
# daemon_resources line taken in the same vif population), waiting up to 10 s
# for releases to finish.
assert_no_leaks() {
  local baseline=$1 what=${2:-now} now key deadline=$((SECONDS + 10))
  shift $(($# < 2 ? $# : 2))
  local keys=("$@")
  ((${#keys[@]})) || keys=(fds threads guest_maps taps xs_watches)
  while :; do
    now=$(daemon_resources)
    local same=1
    for key in "${keys[@]}"; do
      [[ $(resource_value "$now" "$key") == "$(resource_value "$baseline" "$key")" ]] || same=0
    done
    ((same)) && break
    ((SECONDS < deadline)) || fail "resources leaked ($what): baseline [$baseline] now [$now]"
    sleep 0.2
  done
  log "no leaks ($what): $now"
}
