#!/bin/bash
# xl network-attach / network-detach on a running guest, repeated, on unetbackd; xl network-list follows; no libxl timeout; two vifs at once.
# knobs: lab.rounds=N (default 3)
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
ROUNDS=${LAB_ROUNDS:-3}
setup_bridge
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:-}
guest_create ad 2 256 ""   # no vif at boot
[ "$(netlist_count ad)" = 0 ] || check_fail "guest starts with vifs"
for r in $(seq 1 "$ROUNDS"); do
  mac=$(lab_mac 2 "$r"); ip=$(lab_ip 2 "$r")
  devid=$(vif_attach ad "$mac") || continue
  st=$(netlist_state ad "$devid")
  [ "$st" = 4 ] || check_fail "round $r: xl network-list says state $st for devid $devid"
  if wait_ping "$ip" 20; then p=ok; else p=fail; check_fail "round $r: no ping to $ip"; fi
  vif_detach ad "$devid"; d=$?
  result "round=$r devid=$devid attach_ms=$(attach_ms) list_state=$st ping=$p detach_ms=$DETACH_MS detach_clean=$((d == 0))"
  [ "$(netlist_count ad)" = 0 ] || check_fail "round $r: xl network-list still lists $(netlist_count ad) vifs"
done
# two vifs at the same time
mA=$(lab_mac 2 101); mB=$(lab_mac 2 102)
dA=$(vif_attach ad "$mA"); dB=$(vif_attach ad "$mB")
if [ -n "$dA" ] && [ -n "$dB" ]; then
  result "two_vifs devids=$dA,$dB list_count=$(netlist_count ad) states=$(netlist_state ad "$dA"),$(netlist_state ad "$dB")"
  [ "$(netlist_count ad)" = 2 ] || check_fail "xl network-list shows $(netlist_count ad) vifs, want 2"
  for m in 101 102; do wait_ping "$(lab_ip 2 $m)" 20 || check_fail "no ping to $(lab_ip 2 $m)"; done
  vif_detach ad "$dB" || true
  [ "$(netlist_state ad "$dA")" = 4 ] || check_fail "detaching devid $dB disturbed devid $dA"
  wait_ping "$(lab_ip 2 101)" 20 || check_fail "vif $dA lost its network when $dB left"
  vif_detach ad "$dA" || true
fi
[ "$(netlist_count ad)" = 0 ] || check_fail "vifs left: $(xl network-list ad)"
unetbackd_alive || check_fail "unetbackd died"
xl destroy ad
unetbackd_stop || check_fail "unetbackd exit status $UNETBACKD_RC"
finish
