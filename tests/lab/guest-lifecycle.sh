#!/bin/bash
# Issue #16 on real Xen, kernel netback then unetbackd in one boot, a 2-queue guest with vif rate=10Mb/s: 4 streams from the guest (unetbackd must hold the vif to its rate over both queues; netback's figure is recorded), then netfront unbind/bind in the guest (the frontend closes, both ends reach Closed, and the same device connects a second time: ping again); the reconnect's times per backend.
# knobs: lab.secs=N (iperf3 seconds, default 5)
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
SECS=${LAB_SECS:-5}
Q=2
setup_bridge
mac=$(lab_mac 7 2); ip=$(lab_ip 7 2)

# exercise BACKEND NAME: create, rate, unbind/bind, destroy
exercise() {
  local be=$1 name=$2 id m ups t0
  guest_create "$name" 2 256 "xen_netfront.max_queues=$Q lab.queues=$Q" "bridge=xenbr0,mac=$mac,rate=10Mb/s"
  id=$(domid_of "$name")
  wait_vif "$id" 0 4 60 || fail "$be: vif $id/0 not Connected: $(vif_states "$id" 0)"
  wait_console "$name" "LAB-DOMU-NET-UP .*mac=$mac" 30 || check_fail "$be: guest did not configure $mac"
  wait_ping "$ip" 20 || check_fail "$be: no ping"
  if m=$(iperf_mbps "$ip" "$SECS" 4 from_guest); then
    result "backend=$be rate=10Mb/s queues=$Q streams=4 from_guest_mbps=$m"
    if [ "$be" = unetbackd ]; then
      { [ "$m" -ge 5 ] && [ "$m" -le 13 ]; } || check_fail "$be: $m Mbit/s through a 10 Mb/s vif"
      result "backend=$be queues_that_sent=$(unetbackd_stats "vif$id.0" | python3 /lab/labtool.py queues-that-sent)"
    fi
  else
    check_fail "$be: iperf3 from the guest"
  fi
  ups=$(console_count "$name" "LAB-DOMU-NET-UP .*mac=$mac")
  t0=$(now_ms)
  guest_cmd "$name" "echo vif-0 > /sys/bus/xen/drivers/vif/unbind" >/dev/null || check_fail "$be: unbind"
  if wait_vif "$id" 0 6 30; then
    result "backend=$be unbind states=$(vif_states "$id" 0) unbind_to_closed_ms=$(($(now_ms) - t0))"
  else
    check_fail "$be: not Closed/Closed after unbind: $(vif_states "$id" 0)"
  fi
  t0=$(now_ms)
  guest_cmd "$name" "echo vif-0 > /sys/bus/xen/drivers/vif/bind" >/dev/null || check_fail "$be: bind"
  if wait_vif "$id" 0 4 60; then
    result "backend=$be rebind states=$(vif_states "$id" 0) bind_to_connected_ms=$(($(now_ms) - t0))"
  else
    check_fail "$be: no second connection after bind: $(vif_states "$id" 0)"
  fi
  wait_console "$name" "LAB-DOMU-NET-UP .*mac=$mac" 30 $((ups + 1)) || check_fail "$be: guest did not configure the new interface"
  if wait_ping "$ip" 30; then result "backend=$be rebind ping=ok bind_to_ping_ms=$(($(now_ms) - t0))"; else check_fail "$be: no ping after unbind/bind"; fi
  xl destroy "$name" || check_fail "$be: xl destroy"
}

netback_load "$Q"
exercise netback gn
netback_unload || fail "rmmod xen-netback"
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:---max-queues $Q}
exercise unetbackd gu
unetbackd_alive || check_fail "unetbackd died"
if unetbackd_stop; then result "unetbackd_exit=0"; else check_fail "unetbackd exit status $UNETBACKD_RC"; fi
finish
