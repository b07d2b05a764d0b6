#!/bin/bash
# A network driver domain (vif backend=): a PV domU running xl devd and the backend serves a 2-queue guest, kernel netback then unetbackd in the same driver domain: Connected in the driver domain's backend dir, bridged there by the hotplug script that xl devd runs, ping and iperf3 both ways between guest and driver domain, nothing in dom0, network-detach leaves nothing behind.
# knobs: lab.secs=N (iperf3 seconds, default 3), lab.dd_backends=LIST (default netback,unetbackd)
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
SECS=${LAB_SECS:-3}
DD=netdd
DD_INITRD=/lab/domu/dd-initrd.cpio.gz
dd_ip=$(lab_ip 8 1)
mac=$(lab_mac 8 2); ip=$(lab_ip 8 2)
[ -f "$DD_INITRD" ] || fail "no driver-domain initrd (xen-lab builds it when given unetbackd)"

# driver_domain_cmd DESCRIPTION "COMMAND" [TIMEOUT_S]: COMMAND in the driver domain; a failure is a check failure
driver_domain_cmd() { guest_cmd "$DD" "$2" "${3:-60}" || { check_fail "driver domain: $1"; return 1; }; }
dd_diagnostics() {
  echo "--- driver domain: xl devd log, unetbackd log, interfaces"
  guest_cmd "$DD" "tail -15 /tmp/devd.log; tail -${LAB_LOG_LINES:-30} /tmp/unetbackd.log; ip link" 30 | sed 's/^/[dd] /'
}
dd_vif_gone() {   # dd_vif_gone DOMID SECS: backend dir and TAP in the driver domain both gone
  local be_dir=/local/domain/$dd_id/backend/vif/$1/0 end=$((SECONDS + $2))
  while xenstore-read "$be_dir/state" >/dev/null 2>&1 && [ $SECONDS -lt $end ]; do sleep 0.3; done
  xenstore-read "$be_dir/state" >/dev/null 2>&1 && check_fail "backend dir $be_dir left"
  guest_cmd "$DD" "test ! -e /sys/class/net/vif$1.0" 20 || check_fail "vif$1.0 left in the driver domain"
}

# serve BACKEND NAME: a 2-queue guest whose vif the driver domain serves, checked end to end
serve() {
  local be_dir id t0 m dir
  guest_create "$2" 2 256 "lab.queues=2" "backend=$DD,bridge=xenbr0,mac=$mac,script=vif-bridge-unetback"
  id=$(domid_of "$2"); be_dir=/local/domain/$dd_id/backend/vif/$id/0
  wait_vif "$id" 0 4 60 "$dd_id" || { check_fail "$1: vif $id/0 not Connected: $(vif_states "$id" 0 "$dd_id")"; return 1; }
  result "backend=$1 vif=vif$id.0 states=$(vif_states "$id" 0 "$dd_id") hotplug=$(xenstore-read "$be_dir/hotplug-status" 2>/dev/null) frontend_queues=$(xenstore-read "/local/domain/$id/device/vif/0/multi-queue-num-queues" 2>/dev/null)"
  [ "$(xenstore-read "$be_dir/hotplug-status" 2>/dev/null)" = connected ] || check_fail "$1: hotplug-status is not connected (xl devd's script)"
  { xenstore-read "/local/domain/0/backend/vif/$id/0/state" >/dev/null 2>&1 || [ -e "/sys/class/net/vif$id.0" ]; } &&
    check_fail "$1: dom0 has a backend node or netdev for vif $id/0"
  driver_domain_cmd "$1: vif$id.0 is not a port of xenbr0" "test -e /sys/class/net/vif$id.0/brport"
  wait_console "$2" "LAB-DOMU-NET-UP .*mac=$mac" 30 || check_fail "$1: guest did not configure $mac"
  driver_domain_cmd "$1: ping driver domain -> guest" "ping -c 3 -W 3 $ip" >/dev/null && result "backend=$1 ping dd_to_guest=ok"
  if guest_cmd "$2" "ping -c 3 -W 3 $dd_ip" >/dev/null; then result "backend=$1 ping guest_to_dd=ok"
  else check_fail "$1: ping guest -> driver domain"; fi
  if [ "$1" = unetbackd ]; then guest_cmd "$DD" "unetbackctl stats --json --all vif$id.0" 20 >/tmp/dd-s0.json; fi
  for dir in to_guest from_guest; do
    if m=$(iperf_mbps "$ip" "$SECS" 8 "$dir" "$DD"); then result "backend=$1 iperf dir=$dir streams=8 mbps=$m"
    else check_fail "$1: iperf3 $dir"; fi
  done
  if [ "$1" = unetbackd ]; then
    guest_cmd "$DD" "unetbackctl stats --json --all vif$id.0" 20 >/tmp/dd-s1.json
    queues_moved /tmp/dd-s0.json /tmp/dd-s1.json >/tmp/dd-moved.txt || check_fail "unetbackd: a queue carried nothing"
    sed "s/^/LAB-RESULT scenario=$SCENARIO /" /tmp/dd-moved.txt
  fi
  t0=$(now_ms)
  xl network-detach "$2" 0 >/tmp/detach.out 2>&1 || { cat /tmp/detach.out; check_fail "$1: xl network-detach"; }
  libxl_errors /tmp/detach.out "$1: network-detach"
  dd_vif_gone "$id" 15
  result "backend=$1 detach_ms=$(($(now_ms) - t0))"
  xl destroy "$2" || check_fail "$1: xl destroy $2"
}

setup_bridge
GUEST_INITRD=$DD_INITRD GUEST_CFG_EXTRA="driver_domain = 1" guest_create "$DD" 2 384 "lab.role=driver lab.ip=$dd_ip/16"
dd_id=$(domid_of "$DD")
wait_console "$DD" "LAB-DOMU-DRIVER ready" 5 || fail "driver domain not ready: $(grep -a -m1 LAB-DOMU-DRIVER "$(console_log "$DD")")"
driver_domain_cmd "xl devd is not running" "pidof xl" >/dev/null
for backend in $(echo "${LAB_DD_BACKENDS:-netback,unetbackd}" | tr ',' ' '); do
  case "$backend" in
    netback)
      driver_domain_cmd "insmod xen-netback" "insmod /lib/modules/xen-netback.ko" >/dev/null || continue
      serve netback ddk
      driver_domain_cmd "rmmod xen-netback" "rmmod xen-netback" >/dev/null ;;
    unetbackd)
      driver_domain_cmd "start unetbackd" "(setsid unetbackd --platform xen >/tmp/unetbackd.log 2>&1 </dev/null &); sleep 2; pidof unetbackd" >/dev/null || continue
      serve unetbackd ddu
      driver_domain_cmd "unetbackd died" "pidof unetbackd" >/dev/null
      driver_domain_cmd "unetbackd did not stop on SIGTERM" "kill -TERM \$(pidof unetbackd); for i in 1 2 3 4 5 6 7 8 9 10; do pidof unetbackd >/dev/null || break; sleep 1; done; ! pidof unetbackd" >/dev/null &&
        result "unetbackd_stopped=ok" ;;
    *) fail "lab.dd_backends: unknown backend $backend" ;;
  esac
done
[ "$(failed_checks)" -gt 0 ] && dd_diagnostics >&3
xl destroy "$DD" || check_fail "xl destroy $DD"
finish
