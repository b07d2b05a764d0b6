#!/usr/bin/env bash
# The guests operators run, played by netfront-sim's personalities (docs/xl.md,
# "Guests"), each passing real traffic through unetbackd:
#   xenvif  Windows PV drivers: 4 queues, control ring, multicast control turned
#           off and on every second without re-sending the list; IPv6 neighbour
#           discovery (solicited-node multicast) must keep working throughout
#   gplpv   TSO frames of more than 16 (up to 19) slots, none refused
#   minios  no SG, GSO or checksum offload, backend MTU 9000: the vif is clamped
#           to 1500 and every frame to the guest carries a full checksum
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon --max-queues 4

# frontend_report DOMID: stops the guest's netfront-sim, prints its JSON report.
frontend_report() {
  local pid
  pid=$(netfront_pid "$1") || fail "netfront-sim of guest $1 is not running"
  kill -TERM "$pid"
  forget_pid "$pid"
  grep '^{' "$LOGS/netfront-sim-$1.log" | tail -n 1
}

# vif_counter VIF COUNTER: the counter summed over the vif's queues.
vif_counter() { ctl stats "$1" --json | jq "[.[0].queues[].counters.$2] | add"; }

# neighbour_reachable DEST: the host resolves DEST afresh (a neighbour
# solicitation to its solicited-node group) and gets an echo reply.
neighbour_reachable() {
  ip -n "$HOST_NS" -6 neigh flush dev "$BRIDGE"
  ip netns exec "$HOST_NS" ping -6 -c 2 -i 0.2 -W 1 "$1%$BRIDGE" >/dev/null 2>&1
}

# ---- xenvif --------------------------------------------------------------------
ip -n "$HOST_NS" -6 addr add fe80::1/64 dev "$BRIDGE" nodad
start_guest 1 4 --personality xenvif
ip -n "$(guest_ns 1)" -6 addr add fe80::11/64 dev eth0 nodad
# The guest's list (ff02::1, ff02::1:ff00:11, ...) reaches the daemon.
wait_for 10 "the guest's multicast list" bash -c \
  "(( \$(\"$UNETBACK_BIN/unetbackctl\" --socket \"$WORLD/ctl.sock\" stats vif1.0 --json |
        jq '[.[0].queues[].counters.tx_mcast_add] | add') >= 2 ))"
filtered_before=$(vif_counter vif1.0 rx_drops_multicast_filtered)
failures=0
for ((i = 0; i < 16; i++)); do  # about 8 s: several off-and-on toggles
  neighbour_reachable fe80::11 || failures=$((failures + 1))
  # ff02::5 is not on the guest's list: dropped while filtering is on.
  ip netns exec "$HOST_NS" ping -6 -c 1 -W 0.2 "ff02::5%$BRIDGE" >/dev/null 2>&1 || true
  sleep 0.3
done
filtered=$(($(vif_counter vif1.0 rx_drops_multicast_filtered) - filtered_before))
log "xenvif: $failures of 16 neighbour resolutions failed, $filtered frames filtered"
((failures == 0)) || fail "xenvif: neighbour discovery failed across multicast-control toggles"
((filtered > 0)) || fail "xenvif: multicast filtering was never on"
ctl hash vif1.0 --json | jq -e '.algorithm == "toeplitz"' >/dev/null ||
  fail "xenvif: the control ring's Toeplitz configuration is not in place"
up=$(iperf3_run 1 2 -P 4)
down=$(iperf3_run 1 2 -P 4 -R)
log "xenvif: guest->host $up Mbit/s, host->guest $down Mbit/s"
assert_all_queues_moved vif1.0 4
report=$(frontend_report 1)
log "xenvif report: $report"
jq -e '.multicast_toggles >= 2 and .queues[0].mcast_sent >= 2 and .queues[0].mcast_errors == 0' \
  <<<"$report" >/dev/null || fail "xenvif: toggles or multicast requests missing: $report"

# ---- gplpv ---------------------------------------------------------------------
start_guest 2 1 --personality gplpv
up=$(iperf3_run 2 3)
report=$(frontend_report 2)
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
report=$(frontend_report 3)
jq -e '.queues[0].rx_partial_csum == 0 and .queues[0].rx_errors == 0 and
       .queues[0].tx_max_slots == 1 and .queues[0].rx_packets > 0' <<<"$report" >/dev/null ||
  fail "minios: partial checksums, errors or multi-slot packets: $report"
log "PASS"
