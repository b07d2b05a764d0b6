#!/bin/bash
# xl destroy of a guest in mid-traffic: unetbackd releases that vif (XenStore, TAP, grant mappings) and keeps serving the other guest.
# knobs: lab.secs=N (length of the background traffic, default 30)
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
SECS=${LAB_SECS:-30}
setup_bridge
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:-}
guest_create victim 2 256 "" "bridge=xenbr0,mac=$(lab_mac 5 2)"
guest_create other 2 256 "" "bridge=xenbr0,mac=$(lab_mac 5 3)"
vid=$(domid_of victim); oid=$(domid_of other)
ipv=$(lab_ip 5 2); ipo=$(lab_ip 5 3)
for g in victim other; do
  wait_vif "$(domid_of $g)" 0 4 60 || fail "$g: vif not Connected"
done
{ wait_ping "$ipv" 20 && wait_ping "$ipo" 20; } || fail "guests not reachable"
pid=$(unetbackd_pid)
maps_before=$(grep -c gntdev "/proc/$pid/maps")
# traffic to both guests (rate-limited: the emulated CPUs must still run xl and the
# hotplug scripts), then the victim dies in the middle of it
iperf3 -c "$ipv" -t "$SECS" -P 2 -b 20M >/tmp/iperf-victim.out 2>&1 & victim=$!
start=$(now_ms)
iperf3 -c "$ipo" -t "$SECS" -P 2 -b 20M -R -J >/tmp/iperf-other.json 2>&1 & other=$!
sleep $((SECS / 4))
t0=$(now_ms); xl destroy victim >/tmp/destroy.out 2>&1; rc=$?
ms=$(($(now_ms) - t0)); destroy_from_s=$(((t0 - start) / 1000)); destroy_to_s=$(((t0 + ms - start) / 1000))
result "xl_destroy rc=$rc ms=$ms"
[ $rc = 0 ] || { cat /tmp/destroy.out; check_fail "xl destroy rc=$rc"; }
libxl_errors /tmp/destroy.out "xl destroy victim"
vif_released "$vid" 0 10
unetbackd_alive || fail "unetbackd died when the guest was destroyed"
maps_after=$(grep -c gntdev "/proc/$pid/maps")
result "gntdev_mappings before=$maps_before after=$maps_after"
[ "$maps_after" -lt "$maps_before" ] || check_fail "the victim's rings are still mapped"
wait "$other"
# per-second throughput of the other guest: it must go on while (and after) the victim goes
python3 /lab/labtool.py iperf-around /tmp/iperf-other.json "$destroy_from_s" "$destroy_to_s" >/tmp/other.txt
orc=$?
result "other_during_destroy $(cat /tmp/other.txt)"
[ $orc = 0 ] || check_fail "the other guest's traffic stopped when the victim was destroyed"
kill "$victim" 2>/dev/null; wait "$victim" 2>/dev/null   # its peer is gone: it would wait for TCP timeouts
[ "$(vif_states "$oid" 0)" = 4/4 ] || check_fail "other guest's vif left Connected: $(vif_states "$oid" 0)"
if m=$(iperf_mbps "$ipo" 4 1 to_guest); then result "other_after_destroy mbps=$m"; else check_fail "other guest unreachable after the destroy"; fi
ping_ok "$ipo" 3 || check_fail "no ping to the other guest"
if unetbackd_ctl_ok; then
  "$UNETBACKCTL" list >/tmp/list.txt 2>&1; sed 's/^/  /' /tmp/list.txt
  grep -q "vif$vid.0" /tmp/list.txt && check_fail "unetbackctl still lists vif$vid.0"
fi
if grep -a -q "vif$vid.0: destroyed" "$UNETBACKD_LOG"; then result "daemon_log=vif$vid.0_destroyed"; else check_fail "unetbackd did not log the end of vif$vid.0"; fi
xl destroy other
unetbackd_stop || check_fail "unetbackd exit status $UNETBACKD_RC"
finish
