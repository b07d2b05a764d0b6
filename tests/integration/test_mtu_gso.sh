#!/usr/bin/env bash
# MTU 1500 and 9000, GSO on and off: TCP crosses in both directions each time.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
ip -n "$HOST_NS" link set "$BRIDGE" mtu 9000
start_daemon

check() {  # check DOMID LABEL
  local up down
  up=$(iperf3_run "$1" 2)
  down=$(iperf3_run "$1" 2 -R)
  log "$2: guest->host $up Mbit/s, host->guest $down Mbit/s"
  ((up > 1 && down > 1)) || fail "$2: no throughput"
}

start_guest 1 1
check 1 "mtu 1500 gso on"
start_guest 2 1 --no-gso
check 2 "mtu 1500 gso off"
GUEST_VIFSPEC="mtu=9000" start_guest 3 2
[[ "$(ip -n "$HOST_NS" -o link show vif3.0 | grep -o 'mtu [0-9]*')" == "mtu 9000" ]] ||
  fail "vif3.0 MTU is not 9000"
ip netns exec "$(guest_ns 3)" ping -c 2 -M 'do' -s 8972 "$HOST_IP" >/dev/null ||
  fail "9000-byte frames do not cross"
check 3 "mtu 9000 gso on"
GUEST_VIFSPEC="mtu=9000" start_guest 4 2 --no-gso
ip netns exec "$(guest_ns 4)" ping -c 2 -M 'do' -s 8972 "$HOST_IP" >/dev/null ||
  fail "9000-byte frames do not cross without GSO"
check 4 "mtu 9000 gso off"
log "PASS"
