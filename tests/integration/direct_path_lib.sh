# shellcheck shell=bash
# Helpers of the direct-path integration tests (test_direct_path.sh,
# test_direct_path_fallbacks.sh; docs/direct-path.md): two guests, 1 and 2, whose
# vifs vif1.0 and vif2.0 may be paired. Source it after lib.sh and set BYTES (the
# size of one g2g_transfer) before calling g2g_transfer or transfer_through_taps.
PC="$UNETBACK_BIN/payload-check"
[[ -x "$PC" ]] || fail "payload-check not built ($PC)"

tap_bytes() {  # tap_bytes VIF: rx + tx bytes the TAP's own statistics count
  local s=/sys/class/net/$1/statistics
  ip netns exec "$HOST_NS" sh -c "echo \$((\$(cat $s/rx_bytes) + \$(cat $s/tx_bytes)))"
}
tap_stat() {  # tap_stat VIF COUNTER: one of the TAP's own statistics (rx_packets, ...)
  ip netns exec "$HOST_NS" cat "/sys/class/net/$1/statistics/$2"
}
pair_is() {  # pair_is on|off: the daemon's latest verdict on vif1.0 <-> vif2.0
  grep "direct path vif1.0 <-> vif2.0: " "$LOGS/unetbackd.log" | tail -1 | grep -q ": $1"
}
verdicts() {  # verdicts: how many verdicts on vif1.0 <-> vif2.0 the daemon logged so far
  grep -c "direct path vif1.0 <-> vif2.0: " "$LOGS/unetbackd.log" || true
}
learn_macs() {  # both guests talk through the bridge (ARP, ping): its FDB learns them
  ip netns exec "$(guest_ns 1)" ping -q -c 3 -i 0.2 "$(guest_ip 2)" >/dev/null ||
    fail "guest 1 cannot ping guest 2"
}
# direct_sum VIF FIELD: a counter of the vif's `direct` stats, summed over its
# queues (FIELD: tx_bytes, learning_frames, to_host.group, ...).
direct_sum() { ctl stats "$1" --json | jq "[.[0].direct.queues[].$2] | add"; }

# g2g_transfer FROM TO: BYTES of a seeded payload over TCP, verified at TO.
g2g_transfer() {
  local from=$1 to=$2 seed=$((RANDOM * 32768 + RANDOM))
  ip netns exec "$(guest_ns "$to")" "$PC" tcp-recv --listen "$(guest_ip "$to"):5302" \
    --bytes "$BYTES" --seed "$seed" --timeout 60 >"$WORLD/recv.json" 2>"$LOGS/pc-recv.log" &
  local rpid=$!
  sleep 0.3
  ip netns exec "$(guest_ns "$from")" "$PC" tcp-send --to "$(guest_ip "$to"):5302" \
    --bytes "$BYTES" --seed "$seed" --timeout 60 >/dev/null 2>"$LOGS/pc-send.log" ||
    fail "tcp-send guest $from -> guest $to failed (seed $seed)"
  wait "$rpid" || true
  [[ $(jq -r .ok "$WORLD/recv.json") == true ]] ||
    fail "payload damaged guest $from -> guest $to (seed $seed): $(cat "$WORLD/recv.json")"
  log "guest $from -> guest $to: $BYTES bytes intact, $(jq -r '.mbit_s|floor' "$WORLD/recv.json") Mbit/s"
}

# transfer_through_taps yes|no FROM TO: a transfer, and whether the TAPs carried it.
transfer_through_taps() {
  local want=$1 before1 before2 moved
  before1=$(tap_bytes vif1.0) before2=$(tap_bytes vif2.0)
  g2g_transfer "$2" "$3"
  moved=$(($(tap_bytes vif1.0) - before1 + $(tap_bytes vif2.0) - before2))
  log "the TAPs counted $moved bytes"
  if [[ $want == no ]]; then
    ((moved < BYTES / 100)) || fail "the TAPs carried $moved bytes of a direct transfer"
  else
    ((moved > BYTES)) || fail "the TAPs carried only $moved bytes on the TAP path"
  fi
}
