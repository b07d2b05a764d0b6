#!/usr/bin/env bash
# tools/hotplug/vif-bridge-unetback as libxl runs it, against sim-xenstored:
# - `online type_if=vif` with a backend `vifname`: the TAP (down, as unetbackd
#   leaves it) is renamed, configured and bridged, hotplug-status=connected;
#   `offline` takes the renamed port off the bridge;
# - `add type_if=tap` / `remove` (an HVM guest's emulated NIC, type=ioemu):
#   QEMU's TAP in $INTERFACE goes on the same bridge and off it again, and
#   hotplug-status stays the vif's to write;
# - a missing bridge fails with hotplug-error, as libxl expects.
source "$(dirname "$0")/lib.sh"
SCRIPT="$(cd "$(dirname "$0")/../.." && pwd)/tools/hotplug/vif-bridge-unetback"
start_xenstored
start_host_ns

BE=/local/domain/0/backend/vif/5/0
xenstore-write "$BE/bridge" "$BRIDGE" "$BE/mtu" 1400 "$BE/vifname" "gvif$ID" "$BE/hotplug-status" ""

hotplug() {  # hotplug ENV... -- ARGS...: the script in the host namespace, as libxl runs it
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  ip netns exec "$HOST_NS" env XENSTORED_PATH="$XENSTORED_PATH" XENBUS_PATH=backend/vif/5/0 \
    "${env[@]}" bash "$SCRIPT" "$@"
}
master_of() { ip -n "$HOST_NS" -j link show dev "$1" | jq -r '.[0].master // ""'; }
is_up() { ip -n "$HOST_NS" -j link show dev "$1" | jq -e '.[0].flags | index("UP")' >/dev/null; }
mtu_of() { ip -n "$HOST_NS" -j link show dev "$1" | jq -r '.[0].mtu'; }

# The vif: renamed, bridged, up, connected.
ip -n "$HOST_NS" tuntap add dev vif5.0 mode tap
hotplug vif=vif5.0 -- online type_if=vif || fail "online failed: $(xenstore-read "$BE/hotplug-error" 2>&1)"
ip -n "$HOST_NS" link show dev vif5.0 >/dev/null 2>&1 && fail "vif5.0 was not renamed"
[[ "$(master_of "gvif$ID")" == "$BRIDGE" ]] || fail "gvif$ID is not a port of $BRIDGE"
is_up "gvif$ID" || fail "gvif$ID is not up"
[[ "$(mtu_of "gvif$ID")" == 1400 ]] || fail "gvif$ID MTU $(mtu_of "gvif$ID"), not 1400"
[[ "$(xenstore-read "$BE/hotplug-status")" == connected ]] || fail "hotplug-status not connected"

# The emulated NIC's TAP: bridged beside it; hotplug-status untouched.
xenstore-write "$BE/hotplug-status" ""
ip -n "$HOST_NS" tuntap add dev vif5.0-emu mode tap
hotplug vif=vif5.0 INTERFACE=vif5.0-emu -- add type_if=tap || fail "add type_if=tap failed"
[[ "$(master_of vif5.0-emu)" == "$BRIDGE" ]] || fail "vif5.0-emu is not a port of $BRIDGE"
is_up vif5.0-emu || fail "vif5.0-emu is not up"
[[ -z "$(xenstore-read "$BE/hotplug-status")" ]] || fail "type_if=tap wrote hotplug-status"
hotplug vif=vif5.0 INTERFACE=vif5.0-emu -- remove type_if=tap || fail "remove type_if=tap failed"
[[ -z "$(master_of vif5.0-emu)" ]] || fail "vif5.0-emu is still a bridge port"

hotplug vif=vif5.0 -- offline type_if=vif || fail "offline failed"
[[ -z "$(master_of "gvif$ID")" ]] || fail "gvif$ID is still a bridge port after offline"

# A bridge that does not exist: exit 1 with the reason in hotplug-error.
xenstore-write "$BE/bridge" nosuchbr
hotplug vif=vif5.0 INTERFACE=vif5.0-emu -- add type_if=tap && fail "add with a missing bridge succeeded"
[[ "$(xenstore-read "$BE/hotplug-error")" == *"nosuchbr does not exist"* ]] ||
  fail "hotplug-error: $(xenstore-read "$BE/hotplug-error")"
log "PASS"
