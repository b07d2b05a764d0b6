#!/usr/bin/env bash
# vifname= (issue #16 item 1): `xl create` with vif=['bridge=...,vifname=NAME']
# runs the hotplug script, which renames vif1.0 before bringing it up. The
# daemon leaves its new TAP down for that: Linux 6.1 (Debian 12's dom0
# kernel) refuses to rename an interface that is up; newer kernels allow it.
# Traffic flows through the renamed port; after a kill -9 the new daemon
# adopts the renamed TAP (still bridged, no second vif1.0 created) and
# traffic flows again.
source "$(dirname "$0")/lib.sh"
NAME="gnet$ID"
start_xenstored
start_host_ns
start_daemon --max-queues 2
GUEST_VIFSPEC="vifname=$NAME" start_guest 1 2

master_of() { ip -n "$HOST_NS" -j link show dev "$1" | jq -r '.[0].master // ""'; }
assert_renamed_port() {
  ip -n "$HOST_NS" link show dev vif1.0 >/dev/null 2>&1 && fail "an interface vif1.0 exists ($1)"
  [[ "$(master_of "$NAME")" == "$BRIDGE" ]] || fail "$NAME is not a port of $BRIDGE ($1)"
}
pings() { ip netns exec "$(guest_ns 1)" ping -c 3 -i 0.2 -W 2 "$HOST_IP" >/dev/null; }

assert_renamed_port "after xl create"
wait_for 10 "ping through $NAME" pings
ctl list | grep -q "$NAME" || fail "unetbackctl list does not show $NAME: $(ctl list)"

old=$(daemon_pid)
kill -KILL "$old"
forget_pid "$old"
rm -f "$WORLD/ctl.sock"
start_daemon --max-queues 2
wait_for 10 "the new daemon's resume" grep -q "resuming at" "$LOGS/unetbackd.log"
assert_renamed_port "after the restart"
wait_for 10 "ping through $NAME after the restart" pings
log "PASS"
