#!/bin/bash
# Guests with 1, 2 and 4 netfront queues on unetbackd: queue counts negotiated, every queue's counters and interrupts move.
# knobs: lab.queues=1_2_4
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
QUEUES=${LAB_QUEUES:-1_2_4}; QUEUES=${QUEUES//_/ }
setup_bridge
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:---max-queues 4}
for q in $QUEUES; do
  name=mq$q; mac=$(lab_mac 4 "$q"); ip=$(lab_ip 4 "$q")
  # lab.queues makes the guest's init pass max_queues to insmod xen-netfront
  guest_create "$name" 2 256 "xen_netfront.max_queues=$q lab.queues=$q" "bridge=xenbr0,mac=$mac"
  id=$(domid_of "$name"); fe=/local/domain/$id/device/vif/0
  wait_vif "$id" 0 4 60 || { check_fail "q=$q vif not Connected: $(vif_states "$id" 0)"; xl destroy "$name"; continue; }
  bq=$(xenstore-read "/local/domain/0/backend/vif/$id/0/multi-queue-max-queues" 2>/dev/null || echo -)
  fq=$(xenstore-read "$fe/multi-queue-num-queues" 2>/dev/null || echo 1)
  wait_console "$name" "LAB-DOMU-NET-UP .*mac=$mac" 30 || check_fail "q=$q guest did not configure $mac"
  gq=$(grep -a "LAB-DOMU-NET-UP .*mac=$mac" "$(console_log "$name")" | sed -n 's/.*txqueues=\([0-9]*\).*/\1/p' | tail -1)
  result "q=$q backend_max_queues=$bq frontend_num_queues=$fq guest_txqueues=$gq"
  { [ "$fq" = "$q" ] && [ "$gq" = "$q" ]; } || check_fail "q=$q: the frontend uses $fq queues, the guest has $gq"
  # one queue: netfront writes the ring keys directly under device/vif/N (netif.h)
  [ "$q" = 1 ] && xenstore-read "$fe/queue-0/tx-ring-ref" >/dev/null 2>&1 && check_fail "q=1 wrote queue-0/ keys"
  wait_ping "$ip" 20 || { check_fail "q=$q no ping"; xl destroy "$name"; continue; }
  ctl=0; unetbackd_ctl_ok && unetbackd_stats "vif$id.0" >/tmp/s0.json && ctl=1
  irq0=$(guest_queue_irqs "$name" 0)
  # many flows in both directions: flow hashing spreads them over the queues
  for round in 1 2 3; do
    iperf_mbps "$ip" 2 $((4 * q)) to_guest >/dev/null || check_fail "q=$q iperf3 to_guest"
    iperf_mbps "$ip" 2 $((4 * q)) from_guest >/dev/null || check_fail "q=$q iperf3 from_guest"
    irq1=$(guest_queue_irqs "$name" 0)
    moved=1; irqs_moved "$irq0" "$irq1" || moved=0
    if [ $ctl = 1 ]; then
      unetbackd_stats "vif$id.0" >/tmp/s1.json
      queues_moved /tmp/s0.json /tmp/s1.json >/tmp/moved.txt || moved=0
    fi
    [ $moved = 1 ] && break
  done
  result "q=$q rounds=$round guest_queue_irqs_before=$irq0 after=$irq1"
  irqs_moved "$irq0" "$irq1" || check_fail "q=$q: some netfront queue took no interrupt"
  if [ $ctl = 1 ]; then
    sed "s/^/LAB-RESULT scenario=$SCENARIO q=$q unetbackctl /" /tmp/moved.txt
    queues_moved /tmp/s0.json /tmp/s1.json >/dev/null || check_fail "q=$q: some queue's counters did not move (unetbackctl)"
  fi
  # the daemon logs each queue's counters when the vif closes
  xl destroy "$name"
  sleep 1
  disconnect_counters "vif$id.0" "$q" >/tmp/counters.txt || check_fail "q=$q: the daemon's counters do not show $q queues that all carried tx and rx"
  sed "s/^/LAB-RESULT scenario=$SCENARIO q=$q daemon_counters /" /tmp/counters.txt
done
unetbackd_alive || check_fail "unetbackd died"
unetbackd_stop || check_fail "unetbackd exit status $UNETBACKD_RC"
finish
