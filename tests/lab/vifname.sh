#!/bin/bash
# vif=['bridge=xenbr0,vifname=gnet0'] with the stock vif-bridge, kernel netback then unetbackd: the script renames the vif (Linux 6.1 refuses to rename an interface that is up), bridges it, the guest answers pings; unetbackd's TAP survives a kill -9 of the daemon (the new one adopts gnet0: bridged, no second vif<D>.0, pings again); xl destroy removes it.
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
NAME=gnet0
setup_bridge
mac=$(lab_mac 6 2); ip=$(lab_ip 6 2)

# renamed_port BACKEND DOMID: gnet0 exists, is a port of xenbr0, vif<D>.0 does not exist
renamed_port() {
  [ -e "/sys/class/net/$NAME/brport" ] || { check_fail "$1: $NAME is not a port of xenbr0"; return 1; }
  [ -e "/sys/class/net/vif$2.0" ] && { check_fail "$1: vif$2.0 exists beside $NAME"; return 1; }
  return 0
}
# serve BACKEND NAME: a guest with vifname=, Connected, renamed, bridged, pinged
serve() {
  guest_create "$2" 1 256 "" "bridge=xenbr0,mac=$mac,vifname=$NAME"
  id=$(domid_of "$2")
  wait_vif "$id" 0 4 60 || fail "$1: vif $id/0 not Connected: $(vif_states "$id" 0)"
  renamed_port "$1" "$id" && result "backend=$1 tap=$NAME bridged=xenbr0"
  wait_console "$2" "LAB-DOMU-NET-UP .*mac=$mac" 30 || check_fail "$1: guest did not configure $mac"
  if wait_ping "$ip" 20; then result "backend=$1 ping=ok"; else check_fail "$1: no ping through $NAME"; fi
}
gone_after_destroy() {
  local end=$((SECONDS + 15))
  xl destroy "$2" || check_fail "$1: xl destroy"
  while [ -e "/sys/class/net/$NAME" ] && [ $SECONDS -lt $end ]; do sleep 0.5; done
  [ -e "/sys/class/net/$NAME" ] && check_fail "$1: $NAME left after destroy"
}

netback_load 1
serve netback vk
gone_after_destroy netback vk
netback_unload || fail "rmmod xen-netback"

# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:-}
serve unetbackd vu
old=$(unetbackd_pid)
kill -KILL "$old"; wait "$old" 2>/dev/null; rm -f /run/unetbackd.pid
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:-}
if wait_ping "$ip" 30; then result "backend=unetbackd after=kill9 ping=ok"; else check_fail "no ping through $NAME after kill -9"; fi
renamed_port "unetbackd after kill -9" "$id" && result "backend=unetbackd after=kill9 tap=$NAME adopted"
gone_after_destroy unetbackd vu
unetbackd_alive || check_fail "unetbackd died"
if unetbackd_stop; then result "unetbackd_exit=0"; else check_fail "unetbackd exit status $UNETBACKD_RC"; fi
finish
