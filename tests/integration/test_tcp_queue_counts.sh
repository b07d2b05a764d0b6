#!/usr/bin/env bash
# Real TCP both ways with 1, 2, 4 and 8 queues: every queue's counters move in
# both directions. 8 x queues parallel streams (at most 64) so that the flow
# hashes of both kernels spread them over every queue.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon --max-queues 8

domid=1
for queues in 1 2 4 8; do
  start_guest "$domid" "$queues"
  streams=$((queues * 8 > 64 ? 64 : queues * 8))
  up=$(iperf3_run "$domid" 2 -P "$streams")
  down=$(iperf3_run "$domid" 2 -P "$streams" -R)
  log "$queues queues, $streams streams: guest->host $up Mbit/s, host->guest $down Mbit/s"
  ((up > 10 && down > 10)) || fail "$queues queues: throughput too low"
  assert_all_queues_moved "vif$domid.0" "$queues"
  xl network-detach "$domid" 0 || fail "detach did not reach Closed"
  domid=$((domid + 1))
done
log "PASS"
