#!/usr/bin/env bash
# Real TCP both ways through 4 queues (iperf3 -P 8): traffic flows, and every
# queue's counters move in both directions.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon --max-queues 4
start_guest 1 4

up=$(iperf3_run 1 4 -P 8)
down=$(iperf3_run 1 4 -P 8 -R)
log "guest->host ${up} Mbit/s, host->guest ${down} Mbit/s (4 queues, 8 streams)"
((up > 10)) || fail "guest->host throughput too low: $up Mbit/s"
((down > 10)) || fail "host->guest throughput too low: $down Mbit/s"
assert_all_queues_moved vif1.0 4
log "PASS"
