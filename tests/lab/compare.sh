#!/bin/bash
# Kernel xen-netback vs unetbackd in one boot: the same guest, the same iperf3/sockperf runs at 1 and 2 queues; ratios.
# knobs: lab.secs=N (iperf3 seconds per run, default 6)  lab.queues=1_2
#        lab.variants=NAME:FLAG:VALUE+NAME2:...  also measure unetbackd with these extra
#        flags (':' stands for a space), e.g. lab.variants=poll0:--poll-us:0
. /lab/lab-lib.sh
SECS=${LAB_SECS:-6}; QUEUES=${LAB_QUEUES:-1_2}; QUEUES=${QUEUES//_/ }
setup_bridge
# one guest for every run: vifs are hot-plugged, netfront's max_queues is set before each
guest_create cmp 2 256 ""
declare -A R

# queue_counters VIF: one line per queue with the counters that show how the daemon was
# woken and how it woke the guest
queue_counters() {
  unetbackd_stats "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d.get("result", d) if isinstance(d, dict) else d
keys = ["rx_packets", "rx_slots", "tx_packets", "notify_sent", "events_received",
        "spurious_events", "event_storm_backoffs", "rx_stalls", "grant_copy_calls"]
for v in (d if isinstance(d, list) else d.get("vifs", [d])):
    for q in v.get("queues", []):
        c = q.get("counters", q)
        print("queue=%s %s" % (q.get("queue"), " ".join("%s=%s" % (k, c.get(k, "-")) for k in keys)))'
}

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
  [ "$be" != netback ] && unetbackd_ctl_ok && queue_counters "vif$(domid_of cmp).$devid" | sed "s/^/backend=$be q=$q /" | while read -r line; do result "$line"; done
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
BACKENDS="unetbackd"
mac_base=20
run_daemon() {   # run_daemon NAME [EXTRA FLAGS...]
  local name=$1; shift
  mark "$name"
  # shellcheck disable=SC2086
  unetbackd_start ${UNETBACKD_ARGS:---max-queues 2} "$@"
  for q in $QUEUES; do measure "$name" "$q" $((mac_base + q)); done
  unetbackd_stop || check_fail "$name: unetbackd exit status $UNETBACKD_RC"
  mac_base=$((mac_base + 10))
}
run_daemon unetbackd
if [ -n "${LAB_VARIANTS:-}" ]; then
  for v in ${LAB_VARIANTS//+/ }; do
    name=unetbackd-${v%%:*}; flags=""; [ "$v" != "${v#*:}" ] && flags=${v#*:}
    # shellcheck disable=SC2086
    run_daemon "$name" ${flags//:/ }
    BACKENDS="$BACKENDS $name"
  done
fi

for be in $BACKENDS; do
  for q in $QUEUES; do
    for k in to_guest from_guest; do
      a=${R[netback,$q,$k]:-}; b=${R[$be,$q,$k]:-}
      [ -n "$a" ] && [ -n "$b" ] && result "compare backend=$be q=$q dir=$k netback_mbps=$a unetbackd_mbps=$b ratio=$(fcalc "$b / ($a > 0 ? $a : 1)")"
    done
    a=${R[netback,$q,lat]:-}; b=${R[$be,$q,lat]:-}
    [ -n "$a" ] && [ -n "$b" ] && result "compare backend=$be q=$q sockperf netback_us=$a unetbackd_us=$b ratio=$(fcalc "$b / $a")"
  done
done
finish
