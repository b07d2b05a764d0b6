#!/bin/bash
# Issue #16 on real Xen, kernel netback then unetbackd in one boot: a guest that stops taking frames (xl pause) while dom0 sends to it. Each backend must turn the vif's carrier off after the RX stall timeout (5 s here, both backends), keep dom0 and the daemon responsive, and turn it on again once the guest is unpaused and posts buffers: ping answers again. Records the time from the pause to carrier off and from the unpause to the first answered ping.
# knobs: lab.stall_ms=N (the RX stall timeout given to both backends, default 5000)
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
STALL_MS=${LAB_STALL_MS:-5000}
Q=2
setup_bridge
mac=$(lab_mac 9 2); ip=$(lab_ip 9 2)

# carrier DOMID: the vif's carrier (1/0), "-" when it cannot be read
carrier() { cat "/sys/class/net/vif$1.0/carrier" 2>/dev/null || echo -; }
# wait_carrier DOMID VALUE TIMEOUT_S: true once the carrier was seen at VALUE (a
# second read could miss it: the kernel netback once turned it on again 0.2 s later)
wait_carrier() {
  local end=$((SECONDS + $3))
  while [ $SECONDS -lt $end ]; do
    [ "$(carrier "$1")" = "$2" ] && return 0
    sleep 0.2
  done
  return 1
}

# udp_flow IP SECONDS: 200 datagrams a second to the discard port (no answer needed)
udp_flow() {
  python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    for _ in range(20):
        s.sendto(b"x" * 1000, (sys.argv[1], 9))
    time.sleep(0.1)' "$1" "$2"
}

# exercise BACKEND NAME: pause under traffic, carrier off, unpause, carrier on, ping
exercise() {
  local be=$1 name=$2 id t0 t1 flow
  guest_create "$name" 2 256 "xen_netfront.max_queues=$Q lab.queues=$Q" "bridge=xenbr0,mac=$mac"
  id=$(domid_of "$name")
  wait_vif "$id" 0 4 60 || { check_fail "$be: vif $id/0 not Connected: $(vif_states "$id" 0)"; return 1; }
  wait_ping "$ip" 30 || { check_fail "$be: no ping"; return 1; }
  [ "$(carrier "$id")" = 1 ] || check_fail "$be: carrier $(carrier "$id") before the pause"
  # the paused guest answers no ARP: dom0 must still address frames to it
  ip neigh replace "$ip" lladdr "$mac" dev xenbr0 nud permanent
  xl pause "$name" || { check_fail "$be: xl pause"; return 1; }
  t0=$(now_ms)
  udp_flow "$ip" 60 & flow=$!
  if wait_carrier "$id" 0 $((STALL_MS / 1000 + 40)); then
    result "backend=$be pause_to_carrier_off_s=$(fcalc "($(now_ms) - $t0) / 1000")"
    sleep 1   # does it stay off while the guest is still paused? (recorded, not required)
    result "backend=$be carrier_1s_after_off=$(carrier "$id")"
  else
    check_fail "$be: carrier still $(carrier "$id") $((($(now_ms) - t0) / 1000)) s into the stall"
  fi
  if [ "$be" = unetbackd ]; then
    unetbackd_alive || check_fail "unetbackd died in the stall"
    "$UNETBACKCTL" list >/dev/null 2>&1 || check_fail "unetbackctl list failed in the stall"
  fi
  kill "$flow" 2>/dev/null; wait "$flow" 2>/dev/null
  [ "$be" = unetbackd ] && result "backend=$be rx_stalls=$(queue_counter_sum "vif$id.0" rx_stalls)"
  t1=$(now_ms)
  xl unpause "$name" || check_fail "$be: xl unpause"
  if wait_ping "$ip" 60; then
    result "backend=$be unpause_to_ping_s=$(fcalc "($(now_ms) - $t1) / 1000")"
  else
    check_fail "$be: no ping after the unpause (carrier $(carrier "$id"))"
  fi
  wait_carrier "$id" 1 10 || check_fail "$be: carrier $(carrier "$id") after the unpause"
  ip neigh del "$ip" dev xenbr0 2>/dev/null
  xl destroy "$name" || check_fail "$be: xl destroy"
}

netback_load "$Q" "rx_stall_timeout_msecs=$STALL_MS"
exercise netback sn
netback_unload || fail "rmmod xen-netback"
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:---max-queues $Q} --rx-stall-timeout-ms "$STALL_MS"
exercise unetbackd su
unetbackd_alive || check_fail "unetbackd died"
if unetbackd_stop; then result "unetbackd_exit=0"; else check_fail "unetbackd exit status $UNETBACKD_RC"; fi
finish
