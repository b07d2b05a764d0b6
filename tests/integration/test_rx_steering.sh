#!/usr/bin/env bash
# RX steering (netif.h control ring, Toeplitz): frames for the guest reach the
# RX queue the guest's hash mapping names, and without a mapping each flow
# stays on one queue.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon --max-queues 4

# rx_packets_per_queue VIF QUEUES: "n0 n1 ..." of the daemon's rx_packets.
rx_packets_per_queue() {
  local q out=()
  for ((q = 0; q < $2; q++)); do
    out+=("$(queue_counter "$1" "$q" rx_packets)")
  done
  echo "${out[*]}"
}

# share_of QUEUE COUNTS...: percentage of the total on QUEUE.
share_of() {
  local q=$1 total=0 n
  shift
  local counts=("$@")
  for n in "${counts[@]}"; do total=$((total + n)); done
  ((total > 0)) || fail "no RX packets at all"
  echo $((counts[q] * 100 / total))
}

# 1. The guest maps every hash to queue 2: all RX traffic arrives there.
start_guest 1 4 --ctrl-ring --hash-mapping 2
down=$(iperf3_run 1 2 -P 8 -R)
read -ra counts <<<"$(rx_packets_per_queue vif1.0 4)"
log "mapping [2]: host->guest $down Mbit/s, rx_packets per queue: ${counts[*]}"
share=$(share_of 2 "${counts[@]}")
((share >= 99)) || fail "only $share% of RX packets on the mapped queue 2"
extras=$(queue_counter vif1.0 2 rx_hash_extras)
((extras > 0)) || fail "queue 2 attached no HASH extra info"
ctl hash vif1.0 | grep -qx "rx steering: by this hash (the TAP's BPF program)" ||
  fail "unetbackctl hash does not report the mapping as steering RX"

# 2. A default mapping (entry i -> queue i mod 4) spreads 8 flows.
start_guest 2 4 --ctrl-ring
iperf3_run 2 2 -P 8 -R >/dev/null
read -ra counts <<<"$(rx_packets_per_queue vif2.0 4)"
log "mapping [0 1 2 3 ...]: rx_packets per queue: ${counts[*]}"
busy=0
for n in "${counts[@]}"; do ((n > 100)) && busy=$((busy + 1)); done
((busy >= 2)) || fail "8 flows under a 4-queue mapping used only $busy queue(s)"

# 3. No control ring: one flow stays on one queue (the TAP's flow steering).
start_guest 3 4
iperf3_run 3 2 -R >/dev/null
read -ra counts <<<"$(rx_packets_per_queue vif3.0 4)"
log "no mapping, one flow: rx_packets per queue: ${counts[*]}"
best=0
for q in 0 1 2 3; do
  s=$(share_of "$q" "${counts[@]}")
  ((s > best)) && best=$s
done
((best >= 90)) || fail "a single flow was spread over queues (largest share $best%)"

grep -q "RX steering.*unavailable" "$LOGS/unetbackd.log" && fail "steering unavailable"
log "PASS"
