#!/usr/bin/env bash
# Guest and peer failures (issue #7 item 4), one world, four failures in a
# row, a bystander guest (9) passing traffic during and after each:
#  1. the guest's netfront-sim killed -9 mid-traffic (then the toolstack
#     destroys the domain);
#  2. the vif's TAP deleted by an operator (`ip link del vif1.0`): the worker
#     sees its queue fd detached and reports a fault, the vif's data path is
#     released (log "TAP interface gone");
#  3. a bridge removed: the daemon (which does not own bridges) logs that the
#     guest is cut off and keeps the vif and its TAP; re-bridging restores
#     traffic;
#  4. sim-xenstored restarted: the daemon logs the lost connection,
#     reconnects with backoff, re-establishes its watch, releases the vifs
#     whose backend directories vanished, and serves a new guest.
# After each, the daemon holds exactly the resources it held before the
# victim came (fds, threads, guest mappings, TAPs, XenStore watches: lib.sh
# assert_no_leaks), within 10 s.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon
start_guest 9 2
baseline=$(daemon_resources)
echo "RESULT peer_failures baseline $baseline"

ping_ok() { ip netns exec "$(guest_ns "$1")" ping -c "${2:-3}" -i 0.2 -W 2 "${3:-$HOST_IP}" >/dev/null; }
daemon_log_has() { grep -q -- "$1" "$LOGS/unetbackd.log"; }
# Bystander traffic for the whole test: a steady ping whose losses are checked per phase.
bystander_start() {
  ip netns exec "$(guest_ns 9)" ping -i 0.1 -W 1 "$HOST_IP" >"$WORLD/bystander.txt" 2>&1 &
  BYSTANDER=$!
  PIDS+=("$BYSTANDER")  # a failing check must not leave it running
}
bystander_check() {  # bystander_check PHASE: stops the ping, requires replies
  kill -INT "$BYSTANDER" 2>/dev/null
  forget_pid "$BYSTANDER"
  local line
  line=$(grep 'packets transmitted' "$WORLD/bystander.txt" || true)
  log "bystander during $1: $line"
  { [[ $line =~ ([0-9]+)\ received ]] && ((BASH_REMATCH[1] > 0)); } ||
    fail "bystander passed no traffic during $1"
  ping_ok 9 || fail "bystander lost traffic after $1"
}
# flood DOMID: a ping flood from the guest, stopped at exit (lib.sh) if not before.
flood() {
  ip netns exec "$(guest_ns "$1")" ping -f -c 1000000 "$HOST_IP" >/dev/null 2>&1 &
  PIDS+=($!)
}

# ---- 1. the guest process killed -9 mid-traffic ---------------------------
bystander_start
start_guest 1 2
flood 1
sleep 1
kill -KILL "$(netfront_pid 1)" || fail "could not kill guest 1"
sleep 1
xl domain-destroy 1
wait_for 10 "the daemon destroying vif1.0" daemon_log_has "vif1.0: destroyed"
assert_no_leaks "$baseline" "guest killed -9 and destroyed"
bystander_check "guest kill"
echo "RESULT peer_failures guest_killed released=1 $(daemon_resources)"

# ---- 2. the TAP deleted by an operator ---------------------------------------
bystander_start
xl domain-create 1
attach_guest 1 2
flood 1
sleep 1
t0=$SECONDS
ip -n "$HOST_NS" link del vif1.0
wait_for 10 "the daemon reporting vif1.0's TAP gone" daemon_log_has "vif1.0-q.*TAP interface gone"
# The data path is released (threads, guest mappings) while the device exists ...
assert_no_leaks "$baseline" "TAP deleted: data path" threads guest_maps taps
t_release=$((SECONDS - t0))
# ... and the rest when the toolstack removes the device.
xl network-detach 1 0 >/dev/null 2>&1 || true
assert_no_leaks "$baseline" "TAP deleted: device removed"
bystander_check "TAP deletion"
echo "RESULT peer_failures tap_deleted release_s=$t_release $(daemon_resources)"
pkill_guest() { local p; p=$(netfront_pid "$1") && kill -TERM "$p" 2>/dev/null; sleep 0.5; }
pkill_guest 1

# ---- 3. a bridge removed ----------------------------------------------------
# The victim gets its own bridge and subnet (198.18.1.0/24), so removing it
# leaves the bystander's bridge alone.
ip -n "$HOST_NS" link add ubr1 type bridge
ip -n "$HOST_NS" addr add 198.18.1.1/24 dev ubr1
ip -n "$HOST_NS" link set ubr1 up
bystander_start
BRIDGE=ubr1 attach_guest 1 2
ip -n "$(guest_ns 1)" addr flush dev eth0
ip -n "$(guest_ns 1)" addr add 198.18.1.11/24 dev eth0
ping_ok 1 3 198.18.1.1 || fail "no traffic on the victim's bridge"
wait_for 5 "the daemon logging the TAP on its bridge" daemon_log_has "vif1.0: TAP vif1.0 is on bridge ubr1"
ip -n "$HOST_NS" link del ubr1
wait_for 5 "the daemon logging the bridge removal" \
  daemon_log_has "vif1.0: TAP vif1.0 left bridge ubr1: the guest is cut off"
sleep 1
kill -0 "$(daemon_pid)" || fail "unetbackd died when the bridge went"
ip -n "$HOST_NS" link show vif1.0 >/dev/null || fail "vif1.0 vanished with its bridge"
ip -n "$HOST_NS" link add ubr1 type bridge
ip -n "$HOST_NS" addr add 198.18.1.1/24 dev ubr1
ip -n "$HOST_NS" link set ubr1 up
ip -n "$HOST_NS" link set vif1.0 master ubr1
ping_ok 1 3 198.18.1.1 || fail "no traffic after re-bridging"
xl network-detach 1 0 || fail "detach after the bridge test did not reach Closed"
assert_no_leaks "$baseline" "bridge removed, device detached"
bystander_check "bridge removal"
echo "RESULT peer_failures bridge_removed $(daemon_resources)"
pkill_guest 1

# ---- 4. sim-xenstored restarted --------------------------------------------
xs_pid=${PIDS[0]}
kill -TERM "$xs_pid"
wait "$xs_pid" 2>/dev/null || true
t0=$SECONDS
wait_for 10 "the daemon noticing the lost XenStore" daemon_log_has "XenStore connection lost"
# The data path needs no XenStore: the bystander keeps passing traffic.
ping_ok 9 5 || fail "bystander lost traffic while XenStore was down"
start_xenstored
wait_for 10 "sim-xenstored answering" xenstore-read /local/domain/0/domid
wait_for 15 "the daemon reconnecting" daemon_log_has "XenStore reconnected"
t_reconnect=$((SECONDS - t0))
# The fresh store has no backend directories: vif9.0 is released and the
# daemon is back to its idle state (one watch: backend/vif).
wait_for 10 "vif9.0 released" bash -c "! ip -n $HOST_NS link show vif9.0 >/dev/null 2>&1"
deadline=$((SECONDS + 10))
while :; do
  idle=$(daemon_resources)
  [[ $(resource_value "$idle" xs_watches) == 1 && $(resource_value "$idle" guest_maps) == 0 &&
    $(resource_value "$idle" taps) == 0 ]] && break
  ((SECONDS < deadline)) || fail "not back to idle after the XenStore restart: $idle"
  sleep 0.2
done
echo "RESULT peer_failures xenstored_restarted reconnect_s=$t_reconnect $idle"
p=$(netfront_pid 9) && kill -KILL "$p"
# A new guest after the restart works.
start_guest 3 2
ping_ok 3 3 || fail "no traffic for a guest created after the XenStore restart"
kill -0 "$(daemon_pid)" || fail "unetbackd died"
log "PASS"
