#!/usr/bin/env bash
# The guests operators run, played by netfront-sim's personalities (docs/xl.md,
# "Guests"), each passing real traffic through unetbackd:
#   xenvif  Windows PV drivers: 4 queues, control ring, multicast control turned
#           off and on again without re-sending the list; IPv6 neighbour
#           discovery (solicited-node multicast) must keep working
#   gplpv   TSO frames of more than 16 (up to 19) slots, none refused
#   minios  no SG, GSO or checksum offload, backend MTU 9000: the vif is clamped
#           to 1500 and every frame to the guest carries a full checksum
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon --max-queues 4

# frontend_report DOMID: stops the guest's netfront-sim (in this shell, so that
# it is waited for) and sets REPORT to the JSON report it printed on exit.
frontend_report() {
  local pid
  pid=$(netfront_pid "$1") || fail "netfront-sim of guest $1 is not running"
  kill -TERM "$pid"
  forget_pid "$pid"
  REPORT=$(grep '^{' "$LOGS/netfront-sim-$1.log" | tail -n 1) || true
  [[ -n "$REPORT" ]] || fail "netfront-sim of guest $1 printed no report"
}

# vif_counter VIF COUNTER: the counter summed over the vif's queues.
vif_counter() { ctl stats "$1" --json | jq "[.[0].queues[].counters.$2] | add"; }

# neighbour_reachable DEST: the host resolves DEST afresh and gets an echo
# reply within 0.5 s: one neighbour solicitation to DEST's solicited-node
# group, no retransmission (1 s later), so a filtered solicitation fails it.
neighbour_reachable() {
  ip -n "$HOST_NS" -6 neigh flush dev "$BRIDGE"
  ip netns exec "$HOST_NS" ping -6 -c 1 -W 0.5 "$1%$BRIDGE" >/dev/null 2>&1
}

# multicast_control_is VALUE: the guest's request-multicast-control.
multicast_control_is() {
  [[ "$(xenstore-read /local/domain/1/device/vif/0/request-multicast-control)" == "$1" ]]
}

# ---- xenvif --------------------------------------------------------------------
ip -n "$HOST_NS" -6 addr add fe80::1/64 dev "$BRIDGE" nodad
start_guest 1 4 --personality xenvif --multicast-toggle-ms 2000
ip -n "$(guest_ns 1)" -6 addr add fe80::11/64 dev eth0 nodad
# The guest's list (ff02::1, ff02::1:ff00:11, ...) reaches the daemon.
wait_for 10 "the guest's multicast list" bash -c \
  "(( \$(\"$UNETBACK_BIN/unetbackctl\" --socket \"$WORLD/ctl.sock\" stats vif1.0 --json |
        jq '[.[0].queues[].counters.tx_mcast_add] | add') >= 2 ))"
filtered_before=$(vif_counter vif1.0 rx_drops_multicast_filtered)
# In each of three filtering-on periods after an off one (2 s each), the host
# resolves the guest: its solicitation passes only if the list survived.
for ((round = 1; round <= 3; round++)); do
  wait_for 10 "multicast control off (round $round)" multicast_control_is 0
  wait_for 10 "multicast control on again (round $round)" multicast_control_is 1
  sleep 0.2  # the daemon follows the key
  # ff02::5 is not on the guest's list: dropped while filtering is on.
  ip netns exec "$HOST_NS" ping -6 -c 1 -W 0.2 "ff02::5%$BRIDGE" >/dev/null 2>&1 || true
  neighbour_reachable fe80::11 ||
    fail "xenvif: neighbour discovery failed after multicast control went off and on ($round)"
done
filtered=$(($(vif_counter vif1.0 rx_drops_multicast_filtered) - filtered_before))
log "xenvif: the guest resolved after 3 off-and-on toggles; $filtered frames filtered"
((filtered > 0)) || fail "xenvif: multicast filtering was never on"
ctl hash vif1.0 --json | jq -e '.algorithm == "toeplitz"' >/dev/null ||
  fail "xenvif: the control ring's Toeplitz configuration is not in place"
up=$(iperf3_run 1 2 -P 8)
down=$(iperf3_run 1 2 -P 8 -R)
log "xenvif: guest->host $up Mbit/s, host->guest $down Mbit/s"
# 8 flows each way: the flow hash (TX) and the Toeplitz mapping (RX) put them on
# more than one queue (which ones is up to the hash).
busy_tx=0 busy_rx=0
for q in 0 1 2 3; do
  if (($(queue_counter vif1.0 "$q" tx_packets) > 1000)); then busy_tx=$((busy_tx + 1)); fi
  if (($(queue_counter vif1.0 "$q" rx_packets) > 1000)); then busy_rx=$((busy_rx + 1)); fi
done
log "xenvif: $busy_tx queues carried bulk TX, $busy_rx bulk RX"
((busy_tx >= 2 && busy_rx >= 2)) || fail "xenvif: 8 flows used fewer than 2 queues"
frontend_report 1
report=$REPORT
log "xenvif report: $report"
jq -e '.multicast_toggles >= 2 and .queues[0].mcast_sent >= 2 and .queues[0].mcast_errors == 0' \
  <<<"$report" >/dev/null || fail "xenvif: toggles or multicast requests missing: $report"

# ---- gplpv ---------------------------------------------------------------------
start_guest 2 1 --personality gplpv
# TCP sizes TSO frames by its pacing rate; 44 segments at least make 64 KiB frames
# (19 slots of 3450 bytes) whatever the speed
ip netns exec "$(guest_ns 2)" sysctl -qw net.ipv4.tcp_min_tso_segs=44
up=$(iperf3_run 2 3)
frontend_report 2
report=$REPORT
slots=$(jq '.queues[0].tx_max_slots' <<<"$report")
log "gplpv: guest->host $up Mbit/s, largest packet $slots slots"
((up > 1)) || fail "gplpv: no throughput"
((slots > 16)) || fail "gplpv: no packet took more than 16 slots ($slots): the case is not tested"
jq -e '.queues[0].tx_error_responses == 0 and .queues[0].tx_dropped == 0' <<<"$report" \
  >/dev/null || fail "gplpv: packets refused or dropped: $report"
for c in tx_drops_too_many_slots tx_drops_slot_size tx_drops_bad_headers; do
  (($(vif_counter vif2.0 "$c") == 0)) || fail "gplpv: the daemon counted $c"
done

# ---- minios --------------------------------------------------------------------
GUEST_VIFSPEC="mtu=9000" start_guest 3 1 --personality minios
ip -n "$(guest_ns 3)" link set eth0 mtu 1500  # no SG: a Mini-OS guest stays at 1500
[[ "$(ip -n "$HOST_NS" -o link show vif3.0 | grep -o 'mtu [0-9]*')" == "mtu 1500" ]] ||
  fail "minios: vif3.0 was not clamped to 1500 for a frontend without feature-sg"
ip netns exec "$HOST_NS" ping -c 2 -s 8000 "$(guest_ip 3)" >/dev/null ||
  fail "minios: fragmented 8000-byte pings do not cross"
up=$(iperf3_run 3 2)
down=$(iperf3_run 3 2 -R)
log "minios: guest->host $up Mbit/s, host->guest $down Mbit/s"
((up > 1 && down > 1)) || fail "minios: no throughput"
frontend_report 3
report=$REPORT
jq -e '.queues[0].rx_partial_csum == 0 and .queues[0].rx_errors == 0 and
       .queues[0].tx_max_slots == 1 and .queues[0].rx_packets > 0' <<<"$report" >/dev/null ||
  fail "minios: partial checksums, errors or multi-slot packets: $report"
log "PASS"
