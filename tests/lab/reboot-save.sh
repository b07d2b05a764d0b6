#!/bin/bash
# Issue #16 on real Xen, kernel netback then unetbackd in one boot, a 2-queue guest: xl reboot (the domain comes back with a new domid; the old vif's backend node and netdev go, the new one connects and answers ping), then xl save and xl restore (the guest resumes without booting again; its netfront reconnects to the restored domain's new vif and carries TCP both ways). Records the time from each command to the first answered ping.
# knobs: lab.secs=N (iperf3 seconds after the restore, default 3)
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
SECS=${LAB_SECS:-3}
Q=2
MEM=128   # the save image is the guest's memory, written into dom0's RAM-backed root
SAVE=/var/tmp/lab-reboot-save.img
setup_bridge
mac=$(lab_mac 8 2); ip=$(lab_ip 8 2)

# new_domid NAME OLD TIMEOUT_S: prints NAME's domid once it is a domain other than OLD
new_domid() {
  local id end=$((SECONDS + $3))
  while [ $SECONDS -lt $end ]; do
    id=$(domid_of "$1") && [ -n "$id" ] && [ "$id" != "$2" ] && { echo "$id"; return 0; }
    sleep 0.3
  done
  return 1
}

# connected BACKEND DOMID T0_MS WHAT: the domain's vif 0 Connected and the guest answering;
# records WHAT_to_ping_s, the time from T0_MS to the first answered ping
connected() {
  local be=$1 id=$2 t0=$3 what=$4
  wait_vif "$id" 0 4 120 || { check_fail "$be: $what: vif $id/0 not Connected: $(vif_states "$id" 0)"; return 1; }
  wait_ping "$ip" 60 || { check_fail "$be: $what: no ping"; return 1; }
  result "backend=$be ${what}_to_ping_s=$(fcalc "($(now_ms) - $t0) / 1000") domid=$id"
}

# reboot_guest BACKEND NAME: xl reboot; the domain comes back under a new domid
reboot_guest() {
  local be=$1 name=$2 old id t0 readies
  old=$(domid_of "$name"); readies=$(console_count "$name" LAB-DOMU-READY)
  t0=$(now_ms)
  xl reboot "$name" >/tmp/reboot.out 2>&1 || { cat /tmp/reboot.out; check_fail "$be: xl reboot"; return 1; }
  id=$(new_domid "$name" "$old" 180) || { check_fail "$be: $name did not come back from xl reboot"; return 1; }
  vif_released "$old" 0 15
  wait_console "$name" LAB-DOMU-READY 240 $((readies + 1)) || { check_fail "$be: rebooted $name not READY"; return 1; }
  connected "$be" "$id" "$t0" reboot
}

# save_restore BACKEND NAME: xl save, xl restore; the guest resumes (no new boot)
save_restore() {
  local be=$1 name=$2 old id t0 t1 readies rc
  old=$(domid_of "$name"); readies=$(console_count "$name" LAB-DOMU-READY)
  t0=$(now_ms)
  xl save "$name" "$SAVE" >/tmp/save.out 2>&1; rc=$?
  [ $rc = 0 ] || { cat /tmp/save.out; check_fail "$be: xl save rc=$rc"; return 1; }
  result "backend=$be xl_save_s=$(fcalc "($(now_ms) - $t0) / 1000") image_mb=$(($(stat -c %s "$SAVE") >> 20))"
  domid_of "$name" >/dev/null && check_fail "$be: $name still exists after xl save"
  vif_released "$old" 0 15
  t1=$(now_ms)
  xl restore "$SAVE" >/tmp/restore.out 2>&1; rc=$?
  rm -f "$SAVE"
  [ $rc = 0 ] || { cat /tmp/restore.out; check_fail "$be: xl restore rc=$rc"; return 1; }
  result "backend=$be xl_restore_s=$(fcalc "($(now_ms) - $t1) / 1000")"
  id=$(new_domid "$name" "$old" 30) || { check_fail "$be: no restored $name"; return 1; }
  connected "$be" "$id" "$t1" restore || return 1
  result "backend=$be save_to_ping_s=$(fcalc "($(now_ms) - $t0) / 1000")"
  [ "$(console_count "$name" LAB-DOMU-READY)" = "$readies" ] || check_fail "$be: the restored guest booted again"
}

# traffic BACKEND: TCP both ways over the restored vif
traffic() {
  local be=$1 dir m
  for dir in to_guest from_guest; do
    if m=$(iperf_mbps "$ip" "$SECS" $Q "$dir"); then
      result "backend=$be after_restore dir=$dir mbps=$m"
    else
      check_fail "$be: iperf3 $dir after the restore"
    fi
  done
}

# exercise BACKEND NAME: create, reboot, save + restore, traffic, destroy
exercise() {
  local be=$1 name=$2
  guest_create "$name" 2 "$MEM" "xen_netfront.max_queues=$Q lab.queues=$Q" "bridge=xenbr0,mac=$mac"
  connected "$be" "$(domid_of "$name")" "$(now_ms)" create || return 1
  reboot_guest "$be" "$name" || return 1
  save_restore "$be" "$name" || return 1
  traffic "$be"
  [ "$be" = unetbackd ] && result "backend=$be queues_that_sent=$(unetbackd_stats "vif$(domid_of "$name").0" | python3 /lab/labtool.py queues-that-sent)"
  xl destroy "$name" || check_fail "$be: xl destroy"
}

netback_load "$Q"
exercise netback rn
xl destroy rn >/dev/null 2>&1
netback_unload || fail "rmmod xen-netback"
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:---max-queues $Q}
exercise unetbackd ru
xl destroy ru >/dev/null 2>&1
unetbackd_alive || check_fail "unetbackd died"
if unetbackd_stop; then result "unetbackd_exit=0"; else check_fail "unetbackd exit status $UNETBACKD_RC"; fi
finish
