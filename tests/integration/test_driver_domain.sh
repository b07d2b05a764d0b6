#!/usr/bin/env bash
# `backend=` (xl): unetbackd running in a driver domain (domain 5 here) serves
# the vifs whose backend is that domain: it learns its own domid, watches
# /local/domain/5/backend/vif, and the hotplug script runs as that domain
# (as `xl devd` would). Traffic flows both ways on every queue.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
BACKEND_DOMID=5
xl domain-create "$BACKEND_DOMID"
start_bg unetbackd ip netns exec "$HOST_NS" "$UNETBACK_BIN/unetbackd" --platform sim \
  --sim-dir "$SIM_DIR" --xenstore "$XS_DIR/socket.d$BACKEND_DOMID" \
  --control-socket "$WORLD/ctl.sock" --state-dir "$WORLD/state"
wait_for 10 "unetbackd control socket" test -S "$WORLD/ctl.sock"
# The control socket opens before the supervisor logs its domain: wait for the line.
wait_for 10 "the daemon to learn its own domain id" grep -q \
  "supervisor: domain $BACKEND_DOMID, watching /local/domain/$BACKEND_DOMID/backend/vif" \
  "$LOGS/unetbackd.log"

GUEST_VIFSPEC="backend=$BACKEND_DOMID" start_guest 1 2
[[ "$(xenstore-read "/local/domain/$BACKEND_DOMID/backend/vif/1/0/hotplug-status")" == connected ]] ||
  fail "the hotplug script did not run as the driver domain"
[[ "$(xenstore-read /local/domain/1/device/vif/0/backend-id)" == "$BACKEND_DOMID" ]] ||
  fail "the frontend does not name the driver domain"
up=$(iperf3_run 1 2 -P 8)
down=$(iperf3_run 1 2 -P 8 -R)
log "driver domain $BACKEND_DOMID, 2 queues: guest->host $up Mbit/s, host->guest $down Mbit/s"
((up > 10 && down > 10)) || fail "throughput too low"
assert_all_queues_moved vif1.0 2
log "PASS"
