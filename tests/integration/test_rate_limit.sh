#!/usr/bin/env bash
# The vif `rate` setting (xl: rate=50Mb/s@20ms; libxl writes "BYTES,USECS", a credit of BYTES per USECS,
# netback's guest-TX rate limit):
# - guest->host throughput stays at the rate, host->guest is not limited, and a
#   second vif without the key is not limited;
# - the rate is the vif's over all its queues (issue #16 item 8): a 2-queue
#   guest's 4 streams get the rate together, not twice it, and one stream
#   reaches most of it (credit accrues continuously, not in 50 ms steps);
# - `rate` is watched: rewritten while connected, it applies at once.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon --max-queues 2

# xl: rate=50Mb/s@20ms; the backend key: 125000 bytes per 20000 us.
GUEST_VIFSPEC="rate=50Mb/s@20ms" start_guest 1 1
up=$(iperf3_run 1 3)
down=$(iperf3_run 1 3 -R)
log "rate 50 Mbit/s: guest->host $up Mbit/s, host->guest $down Mbit/s"
((up >= 25 && up <= 60)) || fail "guest TX at $up Mbit/s, expected about 50 (rate key)"
((down > 2 * up)) || fail "host->guest ($down Mbit/s) looks limited too"

start_guest 2 1
free=$(iperf3_run 2 3)
log "no rate key: guest->host $free Mbit/s"
((free > 2 * up)) || fail "a vif without a rate key is limited ($free Mbit/s)"

# xl's default interval (50 ms): 62500 bytes per 50000 us.
GUEST_VIFSPEC="rate=10Mb/s" start_guest 3 2
one=$(iperf3_run 3 4)
four=$(iperf3_run 3 4 -P 4)
log "rate 10 Mbit/s over 2 queues: 1 stream $one Mbit/s, 4 streams $four Mbit/s"
((one >= 7 && one <= 12)) || fail "one stream at $one Mbit/s, expected most of 10"
((four >= 7 && four <= 12)) || fail "4 streams at $four Mbit/s together, expected about 10"
q0=$(queue_counter vif3.0 0 tx_packets)
q1=$(queue_counter vif3.0 1 tx_packets)
log "vif3.0 tx_packets per queue: $q0 $q1"
((q0 > 0 && q1 > 0)) || fail "the 4 streams did not use both queues ($q0, $q1)"

xenstore-write /local/domain/0/backend/vif/3/0/rate "125000,20000"
wait_for 5 "the new rate in the log" grep -q "vif3.0: rate now 125000 bytes per 20000 us" \
  "$LOGS/unetbackd.log"
faster=$(iperf3_run 3 3 -P 4)
log "rate rewritten to 50 Mbit/s: 4 streams $faster Mbit/s"
((faster >= 25 && faster <= 60)) || fail "after the rewrite $faster Mbit/s, expected about 50"
log "PASS"
