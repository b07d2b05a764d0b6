#!/bin/bash
# The lab itself, without unetbackd: kernel netback blacklisted, then loaded on purpose; one guest: ping, iperf3, sockperf, console commands.
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
setup_bridge
xl info | grep -E '^(xen_version|nr_cpus|total_memory|free_memory)' | tr -s ' ' | sed 's/^/  /'
modprobe xen-netback 2>/dev/null && check_fail "the blacklist did not stop modprobe xen-netback"
netback_loaded && fail "xen-netback loaded although blacklisted"
result blacklist=ok
netback_load 2
mac=$(lab_mac 1 2); ip=$(lab_ip 1 2)
guest_create s1 2 256 "lab.queues=2" "bridge=xenbr0,mac=$mac"
id=$(domid_of s1)
wait_console s1 "LAB-DOMU-NET-UP dev=eth0" 30 || fail "guest eth0 not configured"
result "vif_states=$(vif_states "$id" 0) hotplug_status=$(xenstore-read "/local/domain/0/backend/vif/$id/0/hotplug-status")"
if ping_ok "$ip" 3; then result ping=ok; else check_fail "ping $ip"; fi
out=$(guest_cmd s1 "grep -c vif0-q /proc/interrupts") || check_fail "guest_cmd rc=$?"
result "guest_cmd=ok guest_queue_irqs=$(echo "$out" | tail -1)"
guest_cmd s1 "false" >/dev/null
if [ $? = 1 ]; then result guest_cmd_status=ok; else check_fail "guest_cmd status"; fi
for dir in to_guest from_guest; do
  if m=$(iperf_mbps "$ip" 3 1 "$dir"); then result "iperf dir=$dir mbps=$m"; else check_fail "iperf3 $dir"; fi
done
if l=$(sockperf_us "$ip" 2); then result "sockperf_avg_latency_us=$l"; else check_fail "sockperf"; fi
xl destroy s1 || check_fail "xl destroy"
if netback_unload; then result netback_unloaded=ok; else check_fail "rmmod xen-netback"; fi
finish
