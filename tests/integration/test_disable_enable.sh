#!/usr/bin/env bash
# `unetbackctl disable` / `enable` during traffic: two guests ping the host
# every 10 ms. Disabling vif1.0 freezes its counters (queues stopped, carrier
# off) while vif2.0 keeps passing traffic and both xenbus states stay 4;
# `list` shows it disabled by the operator. Enabling resumes it from the
# shared rings: its counters move again. Unknown vifs are clear errors.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon --max-queues 2
start_guest 1 2
start_guest 2 2

sum_tx() { ctl stats "$1" --json | jq '[.[0].queues[].counters.tx_packets // 0] | add'; }
carrier() { ip netns exec "$HOST_NS" cat "/sys/class/net/$1/carrier" 2>/dev/null || echo 0; }
states_connected() {
  local d
  for d in 1 2; do
    [[ "$(xenstore-read "/local/domain/$d/device/vif/0/state")" == 4 ]] || return 1
    [[ "$(xenstore-read "/local/domain/0/backend/vif/$d/0/state")" == 4 ]] || return 1
  done
}

for d in 1 2; do
  ip netns exec "$(guest_ns "$d")" ping -q -i 0.01 "$HOST_IP" >"$LOGS/ping-$d.log" 2>&1 &
  PIDS+=($!)
done
wait_for 5 "vif1.0 traffic" bash -c "(( \$($UNETBACK_BIN/unetbackctl --socket $WORLD/ctl.sock stats vif1.0 --json | jq '[.[0].queues[].counters.tx_packets] | add') > 10 ))"

ctl disable vif1.0 || fail "disable failed"
ctl list --json | jq -e '.[] | select(.name == "vif1.0") | .disabled and .disabled_reason == "operator"' \
  >/dev/null || fail "list does not show vif1.0 disabled by the operator: $(ctl list --json)"
ctl list | grep -q "vif1.0.*operator" || fail "list table lacks the reason: $(ctl list)"
[[ "$(carrier vif1.0)" == 0 ]] || fail "vif1.0 carrier still on"
a1=$(sum_tx vif1.0) a2=$(sum_tx vif2.0)
sleep 1
b1=$(sum_tx vif1.0) b2=$(sum_tx vif2.0)
log "disabled: vif1.0 tx $a1 -> $b1, vif2.0 tx $a2 -> $b2"
((b1 == a1)) || fail "vif1.0 counters moved while disabled"
((b2 > a2 + 20)) || fail "vif2.0 stopped passing traffic"
states_connected || fail "a xenbus state left Connected"

ctl enable vif1.0 || fail "enable failed"
wait_for 5 "enable to resume the queues" grep -q "resuming at" "$LOGS/unetbackd.log"
[[ "$(carrier vif1.0)" == 1 ]] || fail "vif1.0 carrier still off"
wait_for 5 "vif1.0 traffic after enable" bash -c \
  "(( \$($UNETBACK_BIN/unetbackctl --socket $WORLD/ctl.sock stats vif1.0 --json | jq '[.[0].queues[].counters.tx_packets] | add') > 20 ))"
ctl list --json | jq -e '.[] | select(.name == "vif1.0") | .disabled | not' >/dev/null ||
  fail "vif1.0 still listed as disabled"
states_connected || fail "a xenbus state left Connected"

out=$(ctl disable vif9.0 2>&1) && fail "disable of an unknown vif succeeded"
grep -q "no vif named 'vif9.0'" <<<"$out" || fail "unclear error for an unknown vif: $out"
out=$(ctl enable vif9.0 2>&1) && fail "enable of an unknown vif succeeded"
grep -q "no vif named 'vif9.0'" <<<"$out" || fail "unclear error for an unknown vif: $out"
kill -0 "$(netfront_pid 1)" || fail "netfront-sim of guest 1 exited"
log "PASS"
