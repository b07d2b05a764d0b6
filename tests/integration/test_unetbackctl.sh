#!/usr/bin/env bash
# unetbackctl against a running unetbackd with a 2-queue guest: every command's
# real output (list, stats table/--json/--all/--watch, dump, log-level) and its
# errors (no daemon, unknown vif, bad arguments), each with its exit status.
source "$(dirname "$0")/lib.sh"

# run_ctl: runs unetbackctl with "$@", leaving stdout in OUT, stderr in ERR and
# the exit status in RC (never fails itself).
run_ctl() {
  RC=0
  ctl "$@" >"$WORLD/out" 2>"$WORLD/err" || RC=$?
  OUT=$(<"$WORLD/out") ERR=$(<"$WORLD/err")
}
expect_ok() {
  run_ctl "$@"
  ((RC == 0)) || fail "unetbackctl $* exited $RC: $ERR"
}
# expect_error STATUS_TEST PATTERN ARGS...: non-zero exit (STATUS_TEST: "any"
# or an exact status), PATTERN (extended regex) on stderr, nothing on stdout.
expect_error() {
  local want=$1 pattern=$2
  shift 2
  run_ctl "$@"
  ((RC != 0)) || fail "unetbackctl $* succeeded; expected an error"
  [[ $want == any || $RC == "$want" ]] || fail "unetbackctl $* exited $RC, expected $want"
  grep -Eq -e "$pattern" <<<"$ERR" || fail "unetbackctl $*: stderr lacks /$pattern/: $ERR"
  [[ -z "$OUT" ]] || fail "unetbackctl $* printed on stdout on error: $OUT"
  log "ok: unetbackctl $* -> exit $RC: $(head -n 1 <<<"$ERR")"
}
# total COUNTER: the sum of one counter over the two queues of vif1.0 (--json).
total() {
  ctl stats vif1.0 --json | jq -r "[.[0].queues[].counters.$1] | add"
}
daemon_log_lines() { wc -l <"$LOGS/unetbackd.log"; }

# --- No daemon: a clear message naming the socket, non-zero exit.
expect_error 1 "cannot reach unetbackd at $WORLD/ctl.sock.*is the daemon running" list
expect_error 1 "cannot reach unetbackd" stats vif1.0

start_xenstored
start_host_ns
start_daemon --max-queues 2
start_guest 1 2
# Traffic both ways so that every queue's counters move: 8 TCP streams (and
# iperf3's control connection) spread over the two queues by their flow hashes;
# all on one queue is 1 in 256.
iperf3_run 1 2 -P 8 >/dev/null

# --- list: the header names its columns; the vif is Connected with 2 queues.
expect_ok list
log "unetbackctl list:"$'\n'"$OUT"
read -r -a head <<<"$(head -n 1 <<<"$OUT")"
[[ "${head[*]}" == "VIF DOMID DEVID STATE TAP QUEUES DISABLED" ]] || fail "list header: ${head[*]}"
row=$(grep '^vif1\.0 ' <<<"$OUT") || fail "list shows no vif1.0: $OUT"
read -r _ domid devid state tap queues disabled <<<"$row"
[[ $domid == 1 && $devid == 0 && $state == Connected && $queues == 2 && $disabled == - ]] ||
  fail "list row: $row"
ip -n "$HOST_NS" link show "$tap" >/dev/null 2>&1 || fail "list names TAP '$tap', which is absent"
[[ $(wc -l <<<"$OUT") == 2 ]] || fail "list shows more than one vif: $OUT"
expect_ok list --json
[[ $(jq -r '.[0] | "\(.name) \(.state) \(.queues) \(.failed)"' <<<"$OUT") == \
  "vif1.0 Connected 2 false" ]] || fail "list --json: $OUT"

# --- stats --json: per-queue counters, every queue carried traffic both ways.
expect_ok stats vif1.0 --json
jq -e 'length == 1 and .[0].name == "vif1.0" and (.[0].queues | map(.queue) == [0, 1])' \
  <<<"$OUT" >/dev/null || fail "stats --json shape: $OUT"
assert_all_queues_moved vif1.0 2

# --- stats (table): a header line, one column per queue, the same figures.
expect_ok stats vif1.0
log "unetbackctl stats vif1.0:"$'\n'"$OUT"
[[ $(head -n 1 <<<"$OUT") == "vif1.0 (2 queues)" ]] || fail "stats title: $(head -n 1 <<<"$OUT")"
read -r -a cols <<<"$(sed -n 2p <<<"$OUT")"
[[ "${cols[*]}" == "counter q0 q1" ]] || fail "stats columns: ${cols[*]}"
json=$(ctl stats vif1.0 --json)
for q in 0 1; do
  for c in tx_packets rx_packets; do
    table=$(awk -v c="$c" -v col=$((q + 2)) '$1 == c {print $col}' <<<"$OUT")
    from_json=$(jq -r ".[0].queues[$q].counters.$c" <<<"$json")
    # The counters can move between the two calls (ARP, ND): never backwards.
    ((table > 0 && from_json >= table)) ||
      fail "stats table q$q $c=$table, --json right after: $from_json"
  done
done
# Zero counters are hidden from the table and shown with --all.
zeros=$(jq -r '.[0].queues | map(.counters) as $c | $c[0] | keys[] |
               select(. as $k | ($c | map(.[$k]) | add) == 0)' <<<"$json")
expect_ok stats vif1.0 --all
all_rows=$(($(wc -l <<<"$OUT") - 2))
every=$(jq -r '.[0].queues[0].counters | length' <<<"$json")
((all_rows == every)) || fail "stats --all shows $all_rows counters, the daemon has $every"
if [[ -n "$zeros" ]]; then
  # A drop or error counter: nothing makes it move in between.
  z=$(grep -E '_(drops|errors)' <<<"$zeros" | head -n 1 || true)
  z=${z:-$(head -n 1 <<<"$zeros")}
  grep -q "^  $z " <<<"$OUT" || fail "stats --all lacks the zero counter $z"
  expect_ok stats vif1.0
  ! grep -q "^  $z " <<<"$OUT" || fail "stats without --all shows the zero counter $z"
fi
# Without a vif: every vif (here the one).
expect_ok stats --json
[[ $(jq -r 'map(.name) | join(",")' <<<"$OUT") == vif1.0 ]] || fail "stats (all vifs): $OUT"

# --- Counters move with traffic.
before=$(total tx_packets)
ip netns exec "$(guest_ns 1)" ping -c 20 -i 0.01 -W 2 "$HOST_IP" >/dev/null || fail "ping failed"
after=$(total tx_packets)
((after >= before + 20)) || fail "tx_packets moved from $before to $after over 20 pings"
log "ok: tx_packets $before -> $after over 20 pings"

# --- --watch: refreshes until stopped (bounded by timeout here).
RC=0
timeout 1.3 "$UNETBACK_BIN/unetbackctl" --socket "$WORLD/ctl.sock" stats vif1.0 --watch 0.2 \
  >"$WORLD/watch" 2>&1 || RC=$?
((RC == 124)) || fail "stats --watch exited $RC before the timeout: $(cat "$WORLD/watch")"
# Each refresh: "ESC[H ESC[2J" (home, clear screen), then the table.
frames=$(grep -c 'vif1\.0 (2 queues)' "$WORLD/watch" || true)
clears=$(grep -o $'\e\\[2J' "$WORLD/watch" | wc -l || true)
((frames >= 3 && clears == frames)) ||
  fail "stats --watch 0.2 for 1.3 s: $frames frames, $clears clears: $(cat -v "$WORLD/watch")"
log "ok: stats --watch 0.2 over 1.3 s: $frames refreshes"
# --count N: exactly N refreshes, then exit 0.
"$UNETBACK_BIN/unetbackctl" --socket "$WORLD/ctl.sock" stats vif1.0 --watch 0.1 --count 3 \
  >"$WORLD/watch-count" || fail "stats --watch 0.1 --count 3 failed"
frames=$(grep -c 'vif1\.0 (2 queues)' "$WORLD/watch-count" || true)
((frames == 3)) || fail "stats --watch --count 3 drew $frames frames"
log "ok: stats --watch 0.1 --count 3: 3 refreshes"
expect_error any "--count" stats vif1.0 --count 3
expect_error any "--watch" stats vif1.0 --watch 0
expect_error any "--watch" stats vif1.0 --watch soon

# --- dump: the ring indices of every queue.
expect_ok dump vif1.0
log "unetbackctl dump vif1.0:"$'\n'"$OUT"
[[ $(grep -c '^queue [01]:$' <<<"$OUT") == 2 ]] || fail "dump: not one section per queue: $OUT"
for q in 0 1; do
  section=$(awk -v q="queue $q:" '$0 == q {on = 1; next} /^queue [0-9]+:$/ {on = 0} on' <<<"$OUT")
  for ring in TX RX; do
    grep -q "^$ring: nr_ents 256$" <<<"$section" || fail "dump queue $q: no $ring ring: $section"
  done
  [[ $(grep -Ec '^req prod [0-9]+ \(-?[0-9]+\) cons [0-9]+ \(-?[0-9]+\) event [0-9]+' \
    <<<"$section") == 2 && $(grep -Ec '^rsp prod [0-9]+ \(base\) pvt [0-9]+' <<<"$section") == 2 ]] ||
    fail "dump queue $q: not a req and a rsp line per ring: $section"
  # The guest transmitted on this queue: its TX request producer moved.
  tx_prod=$(grep -A1 '^TX:' <<<"$section" | awk '$1 == "req" {print $3}')
  ((tx_prod > 0)) || fail "dump queue $q: TX req prod $tx_prod after traffic"
done

# --- log-level: at info the vif state machine's steps are not logged; after
# `log-level debug` they are (a second guest attaches).
grep -q '\[debug\]' "$LOGS/unetbackd.log" && fail "debug lines at the default level (info)"
lines=$(daemon_log_lines)
expect_ok log-level debug
[[ -z "$OUT" ]] || fail "log-level printed: $OUT"
start_guest 2 1
tail -n +"$((lines + 1))" "$LOGS/unetbackd.log" | grep -q '\[debug\].*vif2\.0' ||
  fail "no debug line from vif2.0 after log-level debug"
log "ok: log-level debug: $(grep -c '\[debug\]' "$LOGS/unetbackd.log") debug lines"
expect_ok log-level info
lines=$(daemon_log_lines)
xl network-detach 2 0 || fail "detach of vif2.0"
tail -n +"$((lines + 1))" "$LOGS/unetbackd.log" | grep -q '\[debug\]' &&
  fail "debug lines after log-level info"

# --- Errors: unknown vif, bad arguments. The daemon keeps serving afterwards.
expect_error 1 "no vif named 'vif9.0'" stats vif9.0
expect_error 1 "no vif named 'vif9.0'" stats vif9.0 --json
expect_error 1 "no vif named 'vif9.0'" dump vif9.0
expect_error 1 "no vif named 'eth0'" dump eth0
expect_error 1 "level|loud" log-level loud
expect_error any "vif.*required|required.*vif" dump
expect_error any "level.*required|required.*level" log-level
expect_error any "subcommand|frobnicate" frobnicate
expect_error any "subcommand"
expect_error any "--frob" stats --frob
expect_error any "extra|arguments|vif2" stats vif1.0 vif2.0
# disable/enable (helper R): their argument errors, once unetbackctl has them.
if "$UNETBACK_BIN/unetbackctl" --help 2>&1 | grep -qw disable; then
  for verb in disable enable; do
    expect_error any "vif.*required|required.*vif" "$verb"
    expect_error 1 "no vif named 'vif9.0'" "$verb" vif9.0
  done
else
  log "unetbackctl has no disable/enable yet: their CLI errors are not checked"
fi
expect_ok list
grep -q '^vif1\.0 .* Connected ' <<<"$OUT" || fail "vif1.0 not Connected after the errors: $OUT"

# --- A socket path nobody listens on: same message as no daemon.
RC=0
"$UNETBACK_BIN/unetbackctl" --socket "$WORLD/nothing.sock" list >/dev/null 2>"$WORLD/err" || RC=$?
{ ((RC == 1)) && grep -q "cannot reach unetbackd at $WORLD/nothing.sock" "$WORLD/err"; } ||
  fail "--socket to a missing path: exit $RC, $(cat "$WORLD/err")"
log "PASS"
