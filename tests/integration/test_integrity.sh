#!/usr/bin/env bash
# Payload integrity end to end (issue #7 item 3): payload-check streams a
# seeded random payload in seeded random write sizes through the whole path
# (guest TCP stack -> netfront-sim -> rings -> unetbackd -> TAP -> bridge ->
# host, and back) and verifies every byte plus an FNV-1a 64 checksum on both
# ends. TCP, both directions, GSO negotiated (guest 1) and not (guest 2
# --no-gso): zero corrupted, lost or extra bytes. UDP, both directions: no
# corrupted datagram, and every lost datagram accounted for by a drop
# counter (the daemon's per-queue drop/error counters, the interfaces' drop
# counters, the receiving stack's UDP RcvbufErrors/InErrors).
#
# Sizes: UNETBACK_INTEGRITY_BYTES per TCP transfer (default 2*10^8; the soak
# tier runs 10^9), UNETBACK_INTEGRITY_UDP_BYTES per UDP transfer (default
# 2*10^7), UNETBACK_INTEGRITY_SEED (default random, logged). Prints one
# "RESULT integrity ..." line per transfer.
source "$(dirname "$0")/lib.sh"
TCP_BYTES=${UNETBACK_INTEGRITY_BYTES:-200000000}
UDP_BYTES=${UNETBACK_INTEGRITY_UDP_BYTES:-20000000}
UDP_RATE_MBIT=${UNETBACK_INTEGRITY_UDP_RATE_MBIT:-100}
PC="$UNETBACK_BIN/payload-check"
[[ -x "$PC" ]] || fail "payload-check not built ($PC)"
start_xenstored
start_host_ns
start_daemon
SEED=${UNETBACK_INTEGRITY_SEED:-$((RANDOM * 32768 + RANDOM))}
log "seed $SEED (UNETBACK_INTEGRITY_SEED=$SEED replays these sizes and bytes)"

# ends DOMID DIR: "SENDER_NS RECEIVER_NS RECEIVER_IP" for guest->host (up)
# or host->guest (down).
ends() {
  if [[ $2 == up ]]; then
    echo "$(guest_ns "$1") $HOST_NS $HOST_IP"
  else
    echo "$HOST_NS $(guest_ns "$1") $(guest_ip "$1")"
  fi
}

# tcp_transfer DOMID DIR GSO: one verified TCP stream.
tcp_transfer() {
  local domid=$1 dir=$2 gso=$3 sender receiver rip
  local seed=$((SEED + domid * 10 + ${#dir}))
  read -r sender receiver rip <<<"$(ends "$domid" "$dir")"
  ip netns exec "$receiver" "$PC" tcp-recv --listen "$rip:5301" --bytes "$TCP_BYTES" \
    --seed "$seed" --timeout 60 >"$WORLD/recv.json" 2>"$LOGS/pc-recv.log" &
  local rpid=$!
  local sent
  sent=$(ip netns exec "$sender" "$PC" tcp-send --to "$rip:5301" --bytes "$TCP_BYTES" \
    --seed "$seed" --timeout 60 2>"$LOGS/pc-send.log") || fail "tcp-send ($dir, guest $domid) failed"
  wait "$rpid" || true
  local got
  got=$(cat "$WORLD/recv.json")
  [[ -n "$got" ]] || fail "tcp-recv ($dir, guest $domid) printed nothing"
  local corrupt lost extra secs mbit
  read -r corrupt lost extra secs mbit <<<"$(jq -r '"\(.corrupt_bytes) \(.bytes_lost) \(.extra_bytes) \(.seconds) \(.mbit_s|floor)"' <<<"$got")"
  echo "RESULT integrity proto=tcp dir=$dir gso=$gso guest=$domid bytes=$TCP_BYTES" \
    "corrupt_bytes=$corrupt lost_bytes=$lost extra_bytes=$extra seconds=$secs mbit_s=$mbit" \
    "fnv_sent=$(jq -r .fnv1a64 <<<"$sent") fnv_received=$(jq -r .fnv1a64 <<<"$got")"
  [[ $(jq -r .ok <<<"$got") == true ]] || fail "TCP payload damaged ($dir, guest $domid): $got"
  [[ $(jq -r .fnv1a64 <<<"$sent") == $(jq -r .fnv1a64 <<<"$got") ]] ||
    fail "checksums differ ($dir, guest $domid): sent $sent, received $got"
}

# link_drops NS IFACE: an interface's drop and error counters, summed.
link_drops() {
  ip -n "$1" -s -j link show "$2" |
    jq '[.[] | .stats64 | .rx.dropped, .tx.dropped, .rx.errors, .tx.errors, (.rx.missed // 0)] | add'
}

# drop_counters DOMID RECEIVER_NS: every counter that may account for a lost
# datagram on this path (a snapshot; the test takes the difference): the
# daemon's per-queue drop/error counters, the host TAP, the bridge, the
# guest's eth0, the receiving stack's UDP RcvbufErrors + InErrors.
drop_counters() {
  local domid=$1 receiver=$2 daemon udp
  daemon=$(ctl stats "vif$domid.0" --json |
    jq '[.[0].queues[].counters | to_entries[] | select(.key | test("drop|error")) | .value] | add // 0')
  # shellcheck disable=SC2016  # an awk program: its $ fields are awk's
  udp=$(ip netns exec "$receiver" awk '/^Udp:/ { if (!h) { for (i = 2; i <= NF; i++) n[$i] = i; h = 1 }
    else { print $n["RcvbufErrors"] + $n["InErrors"] } }' /proc/net/snmp)
  echo "$daemon $(link_drops "$HOST_NS" "vif$domid.0") $(link_drops "$HOST_NS" "$BRIDGE")" \
    "$(link_drops "$(guest_ns "$domid")" eth0) $udp"
}

# udp_transfer DOMID DIR GSO: datagrams of random sizes; corruption fails,
# loss must be explained by the counters' deltas.
udp_transfer() {
  local domid=$1 dir=$2 gso=$3 sender receiver rip
  local seed=$((SEED + 7 + domid))
  read -r sender receiver rip <<<"$(ends "$domid" "$dir")"
  local before after
  before=$(drop_counters "$domid" "$receiver")
  ip netns exec "$receiver" "$PC" udp-recv --listen "$rip:5302" --seed "$seed" --idle-ms 1500 \
    --timeout 30 >"$WORLD/urecv.json" 2>"$LOGS/pc-urecv.log" &
  local rpid=$!
  wait_for 10 "udp-recv listening" bash -c \
    "ip netns exec $receiver ss -Hnul 'sport = :5302' | grep -q ."
  local sent
  sent=$(ip netns exec "$sender" "$PC" udp-send --to "$rip:5302" --bytes "$UDP_BYTES" \
    --seed "$seed" --rate-mbit "$UDP_RATE_MBIT") || fail "udp-send ($dir, guest $domid) failed"
  wait "$rpid" || true
  after=$(drop_counters "$domid" "$receiver")
  local got n_sent n_got corrupt lost d_daemon d_vif d_bridge d_eth0 d_udp explained
  got=$(cat "$WORLD/urecv.json")
  n_sent=$(jq -r .datagrams_sent <<<"$sent")
  n_got=$(jq -r .datagrams_received <<<"$got")
  corrupt=$(jq -r '.corrupt_datagrams + .malformed + .duplicates' <<<"$got")
  lost=$((n_sent - n_got))
  read -r d_daemon d_vif d_bridge d_eth0 d_udp < <(paste -d' ' <(tr ' ' '\n' <<<"$after") <(tr ' ' '\n' <<<"$before") |
    awk '{ printf "%d ", $1 - $2 } END { print "" }')
  explained=$((d_daemon + d_vif + d_bridge + d_eth0 + d_udp))
  echo "RESULT integrity proto=udp dir=$dir gso=$gso guest=$domid bytes=$UDP_BYTES" \
    "datagrams_sent=$n_sent datagrams_received=$n_got lost=$lost corrupt=$corrupt" \
    "daemon_drops=$d_daemon host_tap_drops=$d_vif bridge_drops=$d_bridge guest_eth0_drops=$d_eth0" \
    "udp_rcvbuf_inerrors=$d_udp explained=$explained" \
    "send_retries=$(jq -r .send_retries <<<"$sent") mbit_s=$(jq -r '.mbit_s|floor' <<<"$sent")"
  ((corrupt == 0)) || fail "UDP datagrams damaged ($dir, guest $domid): $got"
  ((lost >= 0)) || fail "more datagrams received than sent: $got"
  ((lost <= explained)) ||
    fail "UDP: $lost datagrams lost ($dir, guest $domid) but counters explain only $explained"
}

start_guest 1 2
start_guest 2 2 --no-gso
for dir in up down; do
  tcp_transfer 1 "$dir" on
  tcp_transfer 2 "$dir" off
done
for dir in up down; do
  udp_transfer 1 "$dir" on
  udp_transfer 2 "$dir" off
done
kill -0 "${PIDS[1]}" || fail "unetbackd died"
log "PASS"
