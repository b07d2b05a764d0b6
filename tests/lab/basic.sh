#!/bin/bash
# One PV guest with vif=['bridge=xenbr0'] served by unetbackd: RX steering loaded, Connected, stock vif-bridge, ping and iperf3 both ways, unetbackctl stats, kick and hash.
# knobs: lab.secs=N (iperf3 seconds, default 5)
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
SECS=${LAB_SECS:-5}
setup_bridge
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:-}
# RX steering (a guest's Toeplitz mapping over the control ring) needs the BPF program
# loaded on this dom0's kernel; the daemon says which at start-up
steering=""
for _ in $(seq 50); do
  steering=$(tail -n +"$UNETBACKD_LOG_LINE" "$UNETBACKD_LOG" | grep -a -m1 "RX steering by the guest's hash mapping is")
  [ -n "$steering" ] && break; sleep 0.2
done
case "$steering" in
  *"is available"*) result "rx_steering=available" ;;
  *) check_fail "RX steering unavailable on this dom0: ${steering:-no start-up line}" ;;
esac
mac=$(lab_mac 1 2); ip=$(lab_ip 1 2)
# the vif spec is the plain one: the stock /etc/xen/scripts/vif-bridge is the hotplug script
guest_create b1 2 256 "" "bridge=xenbr0,mac=$mac"
id=$(domid_of b1); be=/local/domain/0/backend/vif/$id/0
wait_vif "$id" 0 4 60 || fail "vif $id/0 not Connected: $(vif_states "$id" 0)"
result "vif=vif$id.0 states=$(vif_states "$id" 0) hotplug_status=$(xenstore-read "$be/hotplug-status") script=$(xenstore-read "$be/script")"
[ "$(xenstore-read "$be/hotplug-status")" = connected ] || check_fail "hotplug-status is not connected"
if [ -e "/sys/class/net/vif$id.0/brport" ]; then result "tap=vif$id.0 bridged=xenbr0"; else check_fail "vif$id.0 is not a port of xenbr0"; fi
if [ "$(netlist_state b1 0)" = 4 ]; then result "xl_network_list_state=4"; else check_fail "xl network-list: $(netlist_state b1 0)"; fi
netback_loaded && check_fail "xen-netback got loaded while unetbackd serves"
wait_console b1 "LAB-DOMU-NET-UP .*mac=$mac" 30 || check_fail "guest did not configure $mac"
if wait_ping "$ip" 20 && ping_ok "$ip" 5; then result "ping dom0_to_guest=ok"; else check_fail "ping dom0 -> guest"; fi
if guest_cmd b1 "ping -c 3 -W 3 $DOM0_IP" >/dev/null; then result "ping guest_to_dom0=ok"; else check_fail "ping guest -> dom0"; fi
for dir in to_guest from_guest; do
  if m=$(iperf_mbps "$ip" "$SECS" 1 "$dir"); then result "iperf dir=$dir mbps=$m"; else check_fail "iperf3 $dir"; fi
  { [ -n "$m" ] && [ "$m" -gt 0 ]; } || check_fail "iperf3 $dir moved nothing"
done
# guest -> dom0 with the guest as the iperf3 client
iperf3 -s -1 -D --logfile /tmp/iperf3-server.log
sleep 1
if out=$(guest_cmd b1 "iperf3 -c $DOM0_IP -t $SECS | tail -3" 120); then
  result "iperf guest_client=ok $(echo "$out" | awk '/receiver/ {print "mbps=" $7}')"
else
  check_fail "iperf3 client in the guest"
fi
if unetbackd_ctl_ok; then
  if unetbackd_stats "vif$id.0" >/tmp/stats.json; then result "unetbackctl_stats=ok"; else check_fail "unetbackctl stats: $(head -3 /tmp/stats.json)"; fi
  # kick (netback debugfs `kick`): every queue answers it, traffic flows on
  k0=$(queue_counter_sum "vif$id.0" kicks)
  if out=$("$UNETBACKCTL" kick "vif$id.0" 2>&1); then result "unetbackctl_kick=$(echo "$out" | tr ' ' _)"; else check_fail "unetbackctl kick: $out"; fi
  end=$((SECONDS + 10))
  until [ "$(queue_counter_sum "vif$id.0" kicks)" -gt "${k0:-0}" ] || [ $SECONDS -ge $end ]; do sleep 0.5; done
  k1=$(queue_counter_sum "vif$id.0" kicks)
  if [ "${k1:-0}" -gt "${k0:-0}" ]; then result "kicks_before=$k0 kicks_after=$k1"; else check_fail "kick not answered: kicks $k0 -> $k1"; fi
  ping_ok "$ip" 3 || check_fail "ping after the kick"
  # hash (netback debugfs `ctrl`): Linux 6.1's netfront connects no control ring
  if "$UNETBACKCTL" hash "vif$id.0" --json >/tmp/hash.json 2>&1 &&
    python3 /lab/labtool.py no-control-ring /tmp/hash.json; then
    result "unetbackctl_hash=no_control_ring"
  else
    check_fail "unetbackctl hash: $(head -3 /tmp/hash.json)"
  fi
else
  result "unetbackctl_stats=unavailable (no control socket)"
fi
t0=$(now_ms); xl destroy b1 || check_fail "xl destroy"
result "xl_destroy_ms=$(($(now_ms) - t0))"
xenstore-read "$be/state" >/dev/null 2>&1 && check_fail "backend dir left after destroy"
[ -e "/sys/class/net/vif$id.0" ] && check_fail "tap vif$id.0 left after destroy"
# the daemon's own account of the connection (logged per queue when the vif closes)
sleep 1
disconnect_counters "vif$id.0" >/tmp/counters.txt || check_fail "unetbackd's counters: a queue carried no traffic"
sed "s/^/LAB-RESULT scenario=$SCENARIO daemon_counters vif=vif$id.0 /" /tmp/counters.txt
unetbackd_alive || check_fail "unetbackd died"
if unetbackd_stop; then result "unetbackd_exit=0"; else check_fail "unetbackd exit status $UNETBACKD_RC"; fi
finish
