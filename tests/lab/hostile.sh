#!/bin/bash
# Hostile guests on real Xen: netfront-sim --attack in a domU against the kernel netback and unetbackd in turn, a Linux guest beside it keeping its traffic; unetbackd must react as the sim tier asserts.
# knobs: lab.hostile_backends=kernel_unetbackd (either or both, '_' between)
# Each attack gets a fresh vif (xl network-attach) on the attacker guest, whose own
# xen-netfront is not loaded (lab.netfront=manual); netfront-sim connects it, attacks
# queue 0's TX ring once Connected and reports every TX response and the backend state.
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
BACKENDS=${LAB_HOSTILE_BACKENDS:-kernel_unetbackd}; BACKENDS=${BACKENDS//_/ }
# ring attacks (netfront-sim --attack), then handshakes with one frontend key overwritten
# (netfront-sim --set-key: key:NAME=VALUE)
ATTACKS="tx-req-prod-overflow tx-slot-crossing-page tx-bad-gref tx-22-slots rx-req-prod-overflow
  tx-kick-storm key:multi-queue-num-queues=999 key:tx-ring-ref=99999999 key:event-channel=99999"
setup_bridge
touch "$UNETBACKD_LOG"
by_mac=$(lab_mac 6 1); by_ip=$(lab_ip 6 1)

# expected ATTACK: what the sim tier asserts for it (tests/hostile/ring_attack_test.cpp):
# "disabled REASON" (the vif is closed and the log names REASON), "error" (the packet
# is answered with NETIF_RSP_ERROR and the vif stays Connected), "connected" (no
# response, the vif stays Connected without an error node) or "refused FRAGMENT" (the
# connect is refused: the backend closes, its error node contains FRAGMENT)
expected() {
  case "$1" in
    tx-req-prod-overflow) echo "disabled producer index overflow" ;;
    tx-slot-crossing-page) echo "disabled slot crosses a page boundary" ;;
    tx-22-slots) echo "disabled malicious number of slots" ;;
    tx-bad-gref) echo "error" ;;
    rx-req-prod-overflow) echo "disabled producer index overflow" ;;
    tx-kick-storm) echo "connected" ;;
    key:multi-queue-num-queues=*) echo "refused multi-queue-num-queues" ;;
    key:tx-ring-ref=*) echo "refused ring" ;;
    key:event-channel=*) echo "refused event" ;;
  esac
}

# check_unetbackd_reaction ATTACK VIF "REPORT REACTION" LOG_FROM: the sim tier's outcome
check_unetbackd_reaction() {
  local want; want=$(expected "$1")
  case "$want" in
    disabled*)
      case "$3" in *"backend_state=5"*|*"backend_state=6"*) ;;
        *) check_fail "$1: $2 was not closed ($3)" ;; esac
      tail -n +"$4" "$UNETBACKD_LOG" | grep -a -q "$2.*${want#disabled }" ||
        check_fail "$1: unetbackd's log does not say '${want#disabled }' for $2" ;;
    error)
      case "$3" in "tx_statuses=-1 backend_state=4 "*) ;;
        *) check_fail "$1: want one error response and $2 Connected, got $3" ;; esac
      case "$3" in *"error_node=none tx_drops_grant_copy=1"*) ;;
        *) check_fail "$1: want no error node and tx_drops_grant_copy 1 for $2 ($3)" ;; esac ;;
    refused*)
      case "$3" in *"exit=4 "*"error_node="*"${want#refused }"*) ;;
        *) check_fail "$1: want the connect refused (backend closed, error node naming '${want#refused }'), got $3" ;; esac ;;
    connected)
      case "$3" in "tx_statuses=none backend_state=4 "*"error_node=none"*) ;;
        *) check_fail "$1: want $2 Connected without an error node, got $3" ;; esac ;;
  esac
}

# unetbackd_ticks BACKEND: the daemon's CPU ticks so far (0 for the kernel netback)
unetbackd_ticks() { if [ "$1" = unetbackd ]; then proc_ticks "$(unetbackd_pid)"; else echo 0; fi; }

# attack BACKEND ATTACK: one vif on the attacker, one attack, the bystander's ping after
attack() {
  local backend=$1 a=$2 mac id devid vif report log_from dmesg_from reaction error_node grant_drops busy0 ticks0 arp_pid args
  mac=$(lab_mac 6 $((10 + ${#RUN_ATTACKS})))
  RUN_ATTACKS="$RUN_ATTACKS."
  id=$(domid_of ha)
  xl network-attach ha bridge=xenbr0 "mac=$mac" >/tmp/attach.out 2>&1 ||
    { cat /tmp/attach.out; check_fail "$backend $a: xl network-attach"; return; }
  devid=$(devid_by_mac "$id" "$mac") || { check_fail "$backend $a: no backend node for $mac"; return; }
  vif=vif$id.$devid
  log_from=$(($(wc -l <"$UNETBACKD_LOG") + 1)); dmesg_from=$(dmesg | wc -l)
  # broadcast ARP floods every bridge port: frames for the attacker's RX ring while the
  # attack waits (an RX ring is only looked at when there is something to deliver)
  busybox arping -q -c 12 -w 8 -I xenbr0 198.18.6.250 >/dev/null 2>&1 &
  arp_pid=$!
  cpu_sample; busy0=$CPU_BUSY; ticks0=$(unetbackd_ticks "$backend")
  case "$a" in
    key:*) args="--set-key ${a#key:} --handshake-timeout 20" ;;
    *) args="--attack $a --attack-wait-ms 3000" ;;
  esac
  report=$(guest_cmd ha "netfront-sim --platform xen --devid $devid $args 2>/tmp/attack.log | tail -1" 90 |
    python3 /lab/labtool.py attack-report 2>&1)
  cpu_sample
  report="$report dom0_busy_s=$(ticks_s $((CPU_BUSY - busy0))) unetbackd_cpu_s=$(ticks_s $(($(unetbackd_ticks "$backend") - ticks0)))"
  wait "$arp_pid"
  # the backend's own words: netback's first line about the vif (not the bridge's), or
  # unetbackd's fault line and its xenbus_dev_fatal-style error node
  if [ "$backend" = kernel ]; then
    reaction=$(dmesg | tail -n +"$((dmesg_from + 1))" | grep -a -v -E "xenbr0|entered|Guest Rx|ADDRCONF" |
      grep -a -E "$vif|netback|vif-$id-$devid" | head -2 | sed 's/^\[[^]]*\] //; s/ /_/g' | paste -s -d '|')
    error_node=$(xenstore-read "/local/domain/0/error/backend/vif/$id/$devid/error" 2>/dev/null | tr ' ' _)
    reaction="${reaction:-none} error_node=${error_node:-none}"
  else
    reaction=$(tail -n +"$log_from" "$UNETBACKD_LOG" | grep -a "$vif" | grep -a -v "counters at disconnect" |
      grep -a -m1 -E "\[(warning|error)\]" | sed 's/^.*\] //; s/ /_/g')
    error_node=$(xenstore-read "/local/domain/0/error/backend/vif/$id/$devid/error" 2>/dev/null | tr ' ' _)
    # netfront-sim closed the vif on exit: its counters are in the daemon's log
    grant_drops=$(tail -n +"$log_from" "$UNETBACKD_LOG" | grep -a "$vif: counters at disconnect" |
      grep -a -o '"tx_drops_grant_copy":[0-9]*' | awk -F: '{s += $2} END {print s + 0}')
    reaction="${reaction:-none} error_node=${error_node:-none} tx_drops_grant_copy=${grant_drops:--}"
  fi
  result "backend=$backend attack=$a vif=$vif $report reaction=${reaction:-none}"
  [ "$backend" = unetbackd ] && check_unetbackd_reaction "$a" "$vif" "$report $reaction" "$log_from"
  ping_ok "$by_ip" 3 >/dev/null || check_fail "$backend $a: the bystander guest lost its traffic"
  xl network-detach ha "$devid" >/tmp/detach.out 2>&1 || { cat /tmp/detach.out; check_fail "$backend $a: xl network-detach"; }
}

for backend in $BACKENDS; do
  if [ "$backend" = kernel ]; then netback_load 1; else
    # shellcheck disable=SC2086  # daemon flags, split into words on purpose
    unetbackd_start ${UNETBACKD_ARGS:-}
  fi
  guest_create hb 1 256 "" "bridge=xenbr0,mac=$by_mac"
  guest_create ha 1 256 "lab.netfront=manual"
  wait_ping "$by_ip" 30 || check_fail "$backend: the bystander guest does not answer"
  RUN_ATTACKS=""
  for a in $ATTACKS; do attack "$backend" "$a"; done
  if m=$(iperf_mbps "$by_ip" 2 1 to_guest); then result "backend=$backend bystander_iperf_mbps=$m"; else check_fail "$backend: bystander iperf3"; fi
  xl destroy ha; xl destroy hb
  if [ "$backend" = kernel ]; then
    netback_unload || check_fail "rmmod xen-netback"
  else
    unetbackd_alive || check_fail "unetbackd died"
    unetbackd_stop || check_fail "unetbackd exit status $UNETBACKD_RC"
  fi
done
finish
