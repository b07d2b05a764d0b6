#!/bin/bash
# netfront-sim --platform xen in a PV guest (gntalloc, evtchn, xenbus) on unetbackd: 2 queues and a control ring Connected, ping and iperf3 both ways, a Toeplitz mapping steers RX to queue 1.
# knobs: lab.secs=N (iperf3 seconds, default 3)
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
SECS=${LAB_SECS:-3}
setup_bridge
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:-}
mac=$(lab_mac 1 5); ip=$(lab_ip 1 5)
# the guest's vif 0 is netfront-sim's, not xen-netfront's; its control ring maps every
# Toeplitz hash to queue 1 (a one-entry mapping)
guest_create nf1 2 256 "lab.netfront=sim lab.queues=2 lab.nfargs=--ctrl-ring+--hash-mapping+1" \
  "bridge=xenbr0,mac=$mac"
id=$(domid_of nf1); fe=/local/domain/$id/device/vif/0; vif=vif$id.0
if ! wait_console nf1 "LAB-DOMU-NETFRONT-SIM connected" 60; then
  guest_cmd nf1 "tail -20 /tmp/netfront-sim.log" 20 | sed 's/^/  netfront-sim: /' >&2
  fail "netfront-sim did not connect: $(grep -a -m1 'LAB-DOMU-NETFRONT-SIM' "$(console_log nf1)")"
fi
wait_vif "$id" 0 4 30 || fail "vif $id/0 not Connected: $(vif_states "$id" 0)"
fq=$(xenstore-read "$fe/multi-queue-num-queues" 2>/dev/null || echo 1)
ctrl=$(xenstore-read "$fe/ctrl-ring-ref" 2>/dev/null || echo -)
result "vif=$vif states=$(vif_states "$id" 0) frontend_num_queues=$fq ctrl_ring_ref=$ctrl"
[ "$fq" = 2 ] || check_fail "netfront-sim asked for 2 queues, the frontend dir says $fq"
[ "$ctrl" != - ] || check_fail "netfront-sim wrote no ctrl-ring-ref"
wait_console nf1 "LAB-DOMU-NET-UP .*mac=$mac" 30 || check_fail "guest did not configure $mac"
if wait_ping "$ip" 20 && ping_ok "$ip" 3; then result "ping dom0_to_guest=ok"; else check_fail "ping dom0 -> guest"; fi
if guest_cmd nf1 "ping -c 3 -W 3 $DOM0_IP" >/dev/null; then result "ping guest_to_dom0=ok"; else check_fail "ping guest -> dom0"; fi
unetbackd_ctl_ok || fail "no unetbackctl socket"
"$UNETBACKCTL" hash "$vif" --json >/tmp/hash.json 2>&1 || check_fail "unetbackctl hash: $(head -3 /tmp/hash.json)"
result "hash $(tr -d ' \n' </tmp/hash.json | head -c 300)"
unetbackd_stats "$vif" >/tmp/nf-s0.json
for dir in to_guest from_guest; do
  if m=$(iperf_mbps "$ip" "$SECS" 8 "$dir"); then result "iperf dir=$dir streams=8 mbps=$m"; else check_fail "iperf3 $dir"; fi
  { [ -n "$m" ] && [ "$m" -gt 0 ]; } || check_fail "iperf3 $dir moved nothing"
done
unetbackd_stats "$vif" >/tmp/nf-s1.json
queues_moved /tmp/nf-s0.json /tmp/nf-s1.json >/tmp/nf-moved.txt
sed "s/^/LAB-RESULT scenario=$SCENARIO /" /tmp/nf-moved.txt
# RX steering: queue 1 must have carried (nearly) every frame to the guest
rx1=$(awk '/queue=1 /{for (i = 1; i <= NF; i++) if ($i ~ /^rx_packets_delta=/) print substr($i, 18)}' /tmp/nf-moved.txt)
rxall=$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^rx_packets_delta=/) s += substr($i, 18)} END {print s + 0}' /tmp/nf-moved.txt)
result "rx_packets_queue1=${rx1:-0} rx_packets_all=$rxall"
{ [ "$rxall" -gt 0 ] && [ $((${rx1:-0} * 100)) -ge $((rxall * 95)) ]; } ||
  check_fail "RX steering: queue 1 carried ${rx1:-0} of $rxall frames to the guest (the mapping sends all to queue 1)"
out=$(guest_cmd nf1 "grep -c -i -E 'violation|error' /tmp/netfront-sim.log" 20)
result "netfront_sim_error_lines=$(echo "$out" | tail -1)"
[ "$(echo "$out" | tail -1)" = 0 ] || check_fail "netfront-sim logged errors: $(guest_cmd nf1 'grep -i -E "violation|error" /tmp/netfront-sim.log | tail -3' 20)"
xl destroy nf1 || check_fail "xl destroy"
sleep 1
[ -e "/sys/class/net/$vif" ] && check_fail "tap $vif left after destroy"
unetbackd_alive || check_fail "unetbackd died"
unetbackd_stop || check_fail "unetbackd exit status $UNETBACKD_RC"
finish
