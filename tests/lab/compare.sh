#!/bin/bash
# Kernel xen-netback vs unetbackd in one boot: the same guest, the same iperf3/sockperf runs at 1 and 2 queues; ratios.
# knobs: lab.secs=N (iperf3 seconds per run, default 6)  lab.queues=1_2
. /lab/lab-lib.sh
SECS=${LAB_SECS:-6}; QUEUES=${LAB_QUEUES:-1_2}; QUEUES=${QUEUES//_/ }
setup_bridge
# one guest for every run: vifs are hot-plugged, netfront's max_queues is set before each
guest_create cmp 2 256 ""
declare -A R

measure() {   # measure BACKEND Q MAC_LOW
  local be=$1 q=$2 mac ip devid irq0 irq1 m l
  mac=$(lab_mac 3 "$3"); ip=$(lab_ip 3 "$3")
  guest_cmd cmp "echo $q > /sys/module/xen_netfront/parameters/max_queues" >/dev/null || { check_fail "set netfront max_queues"; return; }
  devid=$(vif_attach cmp "$mac") || return
  local id; id=$(domid_of cmp)
  local nq; nq=$(xenstore-read "/local/domain/$id/device/vif/$devid/multi-queue-num-queues" 2>/dev/null || echo 1)
  [ "$nq" = "$q" ] || check_fail "backend=$be wanted $q queues, frontend uses $nq"
  wait_ping "$ip" 20 || { check_fail "backend=$be q=$q: no ping to $ip"; vif_detach cmp "$devid"; return; }
  irq0=$(guest_queue_irqs cmp "$devid")
  for dir in to_guest from_guest; do
    if m=$(iperf_mbps "$ip" "$SECS" "$q" $dir); then R[$be,$q,$dir]=$m; result "backend=$be q=$q streams=$q dir=$dir mbps=$m"
    else check_fail "backend=$be q=$q iperf3 $dir"; fi
  done
  if l=$(sockperf_us "$ip" 3); then R[$be,$q,lat]=$l; result "backend=$be q=$q sockperf_udp_pingpong_avg_us=$l"
  else check_fail "backend=$be q=$q sockperf"; fi
  irq1=$(guest_queue_irqs cmp "$devid")
  result "backend=$be q=$q attach_ms=$(attach_ms) guest_queue_irqs_before=$irq0 after=$irq1"
  irqs_moved "$irq0" "$irq1" || check_fail "backend=$be q=$q: a netfront queue saw no interrupts"
  vif_detach cmp "$devid" && result "backend=$be q=$q detach_ms=$DETACH_MS"
}

mark "kernel netback"
netback_load 2
for q in $QUEUES; do measure netback "$q" $((10 + q)); done
netback_unload || fail "rmmod xen-netback"

if ! unetbackd_present; then
  result "unetbackd=absent (only the kernel netback was measured)"
  [ "$(failed_checks)" -gt 0 ] && finish
  exit 77
fi
mark "unetbackd"
unetbackd_start ${UNETBACKD_ARGS:---max-queues 2}
for q in $QUEUES; do measure unetbackd "$q" $((20 + q)); done
unetbackd_stop || check_fail "unetbackd exit status $UNETBACKD_RC"

for q in $QUEUES; do
  for k in to_guest from_guest; do
    a=${R[netback,$q,$k]:-}; b=${R[unetbackd,$q,$k]:-}
    [ -n "$a" ] && [ -n "$b" ] && result "compare q=$q dir=$k netback_mbps=$a unetbackd_mbps=$b ratio=$(fcalc "$b / ($a > 0 ? $a : 1)")"
  done
  a=${R[netback,$q,lat]:-}; b=${R[unetbackd,$q,lat]:-}
  [ -n "$a" ] && [ -n "$b" ] && result "compare q=$q sockperf netback_us=$a unetbackd_us=$b ratio=$(fcalc "$b / $a")"
done
finish
