#!/usr/bin/env bash
# Detach and re-attach; two guests at once; a guest process killed mid-traffic:
# the daemon cleans up that vif and keeps serving the other guest.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon

start_guest 1 2
start_guest 2 2
for round in 1 2 3; do
  old_netfront=$(netfront_pid 1)
  xl network-detach 1 0 || fail "detach round $round did not reach Closed"
  ip -n "$HOST_NS" link show vif1.0 >/dev/null 2>&1 && fail "vif1.0 TAP left behind after detach"
  # The guest's netfront sees its device go away (backend Closing) and stops.
  wait_for 10 "guest 1 netfront gone" bash -c "! kill -0 $old_netfront 2>/dev/null"
  attach_guest 1 2
  ip netns exec "$(guest_ns 1)" ping -c 2 -i 0.2 -W 2 "$HOST_IP" >/dev/null ||
    fail "no traffic after re-attach round $round"
  log "ok: detach/re-attach round $round"
done

# Kill guest 2's netfront mid-traffic.
ip netns exec "$(guest_ns 2)" ping -f -c 100000 "$HOST_IP" >/dev/null 2>&1 &
flood=$!
PIDS+=("$flood")
sleep 1
kill -KILL "$(netfront_pid 2)" || fail "could not kill guest 2"
kill "$flood" 2>/dev/null
forget_pid "$flood"
xl domain-destroy 2
wait_for 10 "vif2.0 released" bash -c "! ip -n $HOST_NS link show vif2.0 >/dev/null 2>&1"
ip netns exec "$(guest_ns 1)" ping -c 3 -i 0.2 -W 2 "$HOST_IP" >/dev/null ||
  fail "guest 1 lost traffic after guest 2 died"
kill -0 "${PIDS[1]}" || fail "unetbackd died"
log "PASS"
