#!/bin/bash
# netfront-sim's personalities in a PV guest (docs/xl.md, "Guests"), kernel netback then unetbackd in one boot: xenvif (4 queues, split event channels, control ring, the multicast list sent and multicast control toggled), gplpv (TX slots of 3450 bytes: TSO frames of up to 19 slots), minios (no SG, GSO or checksum offload, on a vif with mtu=9000). Each Connected, pinged both ways (minios also with 8000-byte fragmented pings), TCP both ways, and netfront-sim's report: no error responses, drops or blank checksums, multicast requests answered OKAY.
# knobs: lab.secs=N (iperf3 seconds, default 3), lab.personalities=a+b (default all three)
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
SECS=${LAB_SECS:-3}
PERSONALITIES=${LAB_PERSONALITIES:-xenvif+gplpv+minios}
setup_bridge

# report_value REPORT KEY: one word of labtool's frontend-report line
report_value() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k {print $2}'; }

# check_report BACKEND PERSONALITY REPORT: what every personality and this one must show
check_report() {
  local be=$1 p=$2 r=$3 k
  for k in tx_error_responses tx_dropped rx_errors rx_partial_csum mcast_errors; do
    [ "$(report_value "$r" "$k")" = 0 ] || check_fail "$be $p: netfront-sim counted $k=$(report_value "$r" "$k")"
  done
  { [ "$(report_value "$r" tx_packets)" -gt 0 ] && [ "$(report_value "$r" rx_packets)" -gt 0 ]; } ||
    check_fail "$be $p: netfront-sim moved no packets"
  case $p in
    xenvif)
      [ "$(report_value "$r" mcast_sent)" -gt 0 ] || check_fail "$be xenvif: no multicast request sent"
      [ "$(report_value "$r" multicast_toggles)" -gt 0 ] || check_fail "$be xenvif: multicast control never toggled" ;;
    gplpv)
      [ "$(report_value "$r" tx_max_slots)" -gt 16 ] || check_fail "$be gplpv: no packet took more than 16 slots" ;;
    minios)
      [ "$(report_value "$r" tx_max_slots)" = 1 ] || check_fail "$be minios: a packet took more than one slot" ;;
  esac
}

# serve BACKEND PERSONALITY N: guest N's vif 0 is netfront-sim --personality P
serve() {
  local be=$1 p=$2 name=$1-$2 mac ip q=1 spec id vif out r
  mac=$(lab_mac 9 "$3"); ip=$(lab_ip 9 "$3"); spec="bridge=xenbr0,mac=$mac"
  [ "$p" = xenvif ] && q=4
  [ "$p" = minios ] && spec="$spec,mtu=9000"
  guest_create "$name" 2 256 "lab.netfront=sim lab.queues=$q lab.nfargs=--personality+$p" "$spec"
  id=$(domid_of "$name"); vif=vif$id.0
  if ! wait_console "$name" "LAB-DOMU-NETFRONT-SIM connected" 90; then
    check_fail "$be $p: netfront-sim did not connect: $(grep -a -m1 'LAB-DOMU-NETFRONT-SIM' "$(console_log "$name")")"
    xl destroy "$name"; return
  fi
  wait_vif "$id" 0 4 30 || check_fail "$be $p: vif $id/0 not Connected: $(vif_states "$id" 0)"
  wait_console "$name" "LAB-DOMU-NET-UP .*mac=$mac" 30 || check_fail "$be $p: guest did not configure $mac"
  if wait_ping "$ip" 30 && ping_ok "$ip" 3; then result "backend=$be personality=$p ping=ok"; else check_fail "$be $p: ping dom0 -> guest"; fi
  guest_cmd "$name" "ping -c 3 -W 3 $DOM0_IP" >/dev/null || check_fail "$be $p: ping guest -> dom0"
  if [ "$p" = minios ]; then
    result "backend=$be personality=minios vif_$(ip -o link show "$vif" | grep -o 'mtu [0-9]*' | tr ' ' '=')"
    busybox ping -c 3 -W 3 -s 8000 "$ip" >/dev/null 2>&1 || check_fail "$be minios: 8000-byte (fragmented) pings"
  fi
  # TCP sizes TSO frames by its pacing rate (about 1 ms of data): at lab speeds they stay
  # small unless the guest asks for at least 44 segments (64 KiB frames, 19 slots of 3450 B)
  [ "$p" = gplpv ] && guest_cmd "$name" "echo 44 >/proc/sys/net/ipv4/tcp_min_tso_segs" >/dev/null
  for dir in to_guest from_guest; do
    if m=$(iperf_mbps "$ip" "$SECS" 2 "$dir"); then result "backend=$be personality=$p iperf dir=$dir mbps=$m"; else check_fail "$be $p: iperf3 $dir"; fi
  done
  out=$(guest_cmd "$name" "killall netfront-sim; sleep 3; cat /tmp/netfront-sim.out" 30)
  if r=$(echo "$out" | python3 /lab/labtool.py frontend-report); then
    result "backend=$be $r"
    check_report "$be" "$p" "$r"
  else
    check_fail "$be $p: no report from netfront-sim: $(echo "$out" | tail -2)"
  fi
  xl destroy "$name" || check_fail "$be $p: xl destroy"
}

netback_load 4
n=0
for p in ${PERSONALITIES//+/ }; do n=$((n + 1)); serve netback "$p" "$n"; done
netback_unload || fail "rmmod xen-netback"

# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:-}
for p in ${PERSONALITIES//+/ }; do n=$((n + 1)); serve unetbackd "$p" "$n"; done
unetbackd_alive || check_fail "unetbackd died"
if unetbackd_stop; then result "unetbackd_exit=0"; else check_fail "unetbackd exit status $UNETBACKD_RC"; fi
finish
