#!/usr/bin/env bash
# The vif `rate` setting (xl: rate=50Mb/s@20ms; libxl writes "BYTES,USECS", a credit of BYTES per USECS,
# netback's guest-TX rate limit): guest->host throughput stays at the rate,
# host->guest is not limited, and a second vif without the key is not limited.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon

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
log "PASS"
