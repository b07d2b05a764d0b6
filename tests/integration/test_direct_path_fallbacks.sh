#!/usr/bin/env bash
# The direct path's fallbacks (issue #20, docs/direct-path.md) that
# test_direct_path.sh does not cause, on the sim platform: two guests of 2 queues
# on one bridge, unetbackd with --direct-path true, guest 2's vif with MTU 1400.
# Frames the pair must not carry go to the host while the pair stays on, and each
# counts under its reason in the daemon's `direct.queues[].to_host`:
#   1. a broadcast from guest 1 (group), flooded by the bridge to vif2.0;
#   2. frames whose source MAC is not guest 1's vif `mac` (spoofed_source), and
#      guest 2's replies to that MAC (not_a_peer);
#   3. a 1500-byte IP packet to guest 2, whose vif has MTU 1400 (mtu), while a
#      1400-byte one goes direct; then vif2.0's MTU lowered to 1300 on the host
#      while paired, which sends 1400-byte packets to the host within the probe
#      interval, and raised back, which brings them back direct.
# Host policies take the whole pair back to the TAP path within the probe
# interval, a transfer then crosses the TAPs, and undoing them brings it back:
#   4. an nft table of family bridge with a forward chain (whose counter then
#      sees the transfer);
#   5. VLAN filtering on the bridge (only where the kernel has it:
#      CONFIG_BRIDGE_VLAN_FILTERING; the log says when the case did not run).
source "$(dirname "$0")/lib.sh"
BYTES=${UNETBACK_DIRECT_BYTES:-20000000}
source "$(dirname "$0")/direct_path_lib.sh"
command -v nft >/dev/null || fail "nft is not installed (the nft bridge case needs it)"
start_xenstored
start_host_ns
start_daemon --max-queues 2 --direct-path true
start_guest 1 2
GUEST_VIFSPEC="mtu=1400" start_guest 2 2
[[ "$(ip -n "$HOST_NS" -o link show vif2.0 | grep -o 'mtu [0-9]*')" == "mtu 1400" ]] ||
  fail "vif2.0 MTU is not 1400"

G1=$(guest_ns 1)
G2=$(guest_ns 2)

# save NAME COMMAND...: remembers what COMMAND prints (a counter) as NAME;
# delta NAME COMMAND...: what COMMAND prints now minus what save NAME remembered.
declare -A SAVED
save() {
  local name=$1
  shift
  SAVED[$name]=$("$@")
}
delta() {
  local name=$1 now
  shift
  now=$("$@")
  echo $((now - SAVED[$name]))
}

# assert_still_on WHAT VERDICTS: the daemon logged no verdict since VERDICTS was
# counted, and vif1.0 still shows vif2.0 as its peer.
assert_still_on() {
  local now
  now=$(verdicts)
  ((now == $2)) ||
    fail "$1: the pair changed verdict: $(grep "direct path vif1.0 <-> vif2.0: " \
      "$LOGS/unetbackd.log" | tail -n +"$(($2 + 1))" | head -3)"
  pair_is on || fail "$1: the pair is not on"
  [[ $(ctl stats vif1.0 --json | jq -r '.[0].direct.peers | join(" ")') == vif2.0 ]] ||
    fail "$1: vif1.0 no longer shows vif2.0 as its peer"
}

# assert_at_least WHAT VALUE MIN
assert_at_least() {
  (($2 >= $3)) || fail "$1: $2, expected at least $3"
  log "$1: $2"
}

# assert_direct_again: after a host policy is undone, the pair comes back and a
# transfer no longer crosses the TAPs.
assert_direct_again() {
  learn_macs
  wait_for 5 "the pair to go direct again" pair_is on
  transfer_through_taps no 1 2
}

learn_macs
wait_for 5 "the pair to go direct" pair_is on
transfer_through_taps no 1 2
N=5  # frames sent in each per-frame case

# ---- 1. broadcast ----------------------------------------------------------
log "case 1: $N broadcast pings from guest 1"
v=$(verdicts)
save group direct_sum vif1.0 to_host.group
save tap1 tap_stat vif1.0 rx_packets  # frames the daemon wrote to vif1.0's TAP
save tap2 tap_stat vif2.0 tx_packets  # frames the bridge sent to vif2.0's TAP
ip netns exec "$G1" ping -q -b -c "$N" -i 0.2 -W 1 198.18.0.255 >/dev/null 2>&1 || true
assert_at_least "vif1.0 to_host.group" "$(delta group direct_sum vif1.0 to_host.group)" "$N"
assert_at_least "vif1.0 TAP rx_packets" "$(delta tap1 tap_stat vif1.0 rx_packets)" "$N"
assert_at_least "vif2.0 TAP tx_packets (flooded by the bridge)" \
  "$(delta tap2 tap_stat vif2.0 tx_packets)" "$N"
assert_still_on "broadcast" "$v"

# ---- 2. spoofed source MAC -------------------------------------------------
# Guest 1's netdev takes another MAC than its vif's `mac`; both guests forget
# their neighbours, so each learns the other's MAC anew (ARP through the host).
SPOOF=00:16:3e:00:00:99
log "case 2: guest 1 sends from $SPOOF, its vif's mac is $(guest_mac 1)"
flush_neighbours() { ip -n "$G1" neigh flush dev eth0 && ip -n "$G2" neigh flush dev eth0; }
v=$(verdicts)
save spoofed direct_sum vif1.0 to_host.spoofed_source
save notpeer direct_sum vif2.0 to_host.not_a_peer
save tap1 tap_stat vif1.0 rx_packets
ip -n "$G1" link set eth0 address "$SPOOF" || fail "cannot set guest 1's MAC to $SPOOF"
flush_neighbours || fail "cannot flush the guests' neighbours"
ip netns exec "$G1" ping -q -c "$N" -i 0.2 -W 1 "$(guest_ip 2)" >/dev/null ||
  fail "guest 1 with a spoofed MAC cannot ping guest 2 through the host"
assert_at_least "vif1.0 to_host.spoofed_source" \
  "$(delta spoofed direct_sum vif1.0 to_host.spoofed_source)" "$N"
assert_at_least "vif2.0 to_host.not_a_peer (replies to $SPOOF)" \
  "$(delta notpeer direct_sum vif2.0 to_host.not_a_peer)" "$N"
assert_at_least "vif1.0 TAP rx_packets" "$(delta tap1 tap_stat vif1.0 rx_packets)" "$N"
assert_still_on "spoofed source" "$v"
ip -n "$G1" link set eth0 address "$(guest_mac 1)" || fail "cannot restore guest 1's MAC"
flush_neighbours || fail "cannot flush the guests' neighbours"
learn_macs
save spoofed direct_sum vif1.0 to_host.spoofed_source
save direct direct_sum vif1.0 tx_packets
ip netns exec "$G1" ping -q -c "$N" -i 0.2 "$(guest_ip 2)" >/dev/null ||
  fail "guest 1 cannot ping guest 2 with its MAC restored"
assert_at_least "vif1.0 direct tx_packets with the MAC restored" \
  "$(delta direct direct_sum vif1.0 tx_packets)" "$N"
[[ $(delta spoofed direct_sum vif1.0 to_host.spoofed_source) == 0 ]] ||
  fail "frames still count as spoofed with the MAC restored"

# ---- 3. bigger than the peer's MTU -----------------------------------------
# The peer's MTU is vif2.0's TAP's (the vifspec's mtu=1400), read again at every
# probe.
log "case 3: 1400- and 1500-byte IP packets from guest 1 (MTU 1500) to guest 2 (MTU 1400)"
v=$(verdicts)
save mtu direct_sum vif1.0 to_host.mtu
save direct direct_sum vif1.0 tx_packets
ip netns exec "$G1" ping -q -M 'do' -s 1372 -c "$N" -i 0.2 "$(guest_ip 2)" >/dev/null ||
  fail "1400-byte IP packets from guest 1 do not reach guest 2"
assert_at_least "vif1.0 direct tx_packets of 1400-byte packets" \
  "$(delta direct direct_sum vif1.0 tx_packets)" "$N"
[[ $(delta mtu direct_sum vif1.0 to_host.mtu) == 0 ]] ||
  fail "1400-byte IP packets counted as bigger than vif2.0's MTU 1400"
save tap1 tap_stat vif1.0 rx_packets
save bytes1 tap_stat vif1.0 rx_bytes
# The bridge drops what exceeds vif2.0's MTU, so these go unanswered.
if ip netns exec "$G1" ping -q -M 'do' -s 1472 -c "$N" -i 0.2 -W 1 "$(guest_ip 2)" >/dev/null; then
  log "1500-byte IP packets were answered"
else
  log "1500-byte IP packets went unanswered (the bridge drops them at vif2.0's MTU)"
fi
assert_at_least "vif1.0 to_host.mtu" "$(delta mtu direct_sum vif1.0 to_host.mtu)" "$N"
assert_at_least "vif1.0 TAP rx_packets" "$(delta tap1 tap_stat vif1.0 rx_packets)" "$N"
assert_at_least "vif1.0 TAP rx_bytes" "$(delta bytes1 tap_stat vif1.0 rx_bytes)" $((N * 1514))
assert_still_on "MTU" "$v"

# An operator's `ip link set vif2.0 mtu` while the pair is on reaches the daemon's
# routes within the probe interval (1 s), as it reaches the bridge at once.
log "case 3b: vif2.0's MTU lowered to 1300 on the host, then raised back to 1400"
v=$(verdicts)
ip -n "$HOST_NS" link set vif2.0 mtu 1300 || fail "cannot lower vif2.0's MTU"
sleep 2.5
save mtu direct_sum vif1.0 to_host.mtu
ip netns exec "$G1" ping -q -M 'do' -s 1372 -c "$N" -i 0.2 -W 1 "$(guest_ip 2)" >/dev/null &&
  fail "1400-byte IP packets reached guest 2 past vif2.0's MTU 1300"
assert_at_least "vif1.0 to_host.mtu with vif2.0 at MTU 1300" \
  "$(delta mtu direct_sum vif1.0 to_host.mtu)" "$N"
ip -n "$HOST_NS" link set vif2.0 mtu 1400 || fail "cannot raise vif2.0's MTU"
sleep 2.5
save direct direct_sum vif1.0 tx_packets
ip netns exec "$G1" ping -q -M 'do' -s 1372 -c "$N" -i 0.2 "$(guest_ip 2)" >/dev/null ||
  fail "1400-byte IP packets do not reach guest 2 with vif2.0 at MTU 1400 again"
assert_at_least "vif1.0 direct tx_packets with vif2.0 at MTU 1400 again" \
  "$(delta direct direct_sum vif1.0 tx_packets)" "$N"
assert_still_on "MTU change" "$v"

# ---- 4. an nft bridge table ------------------------------------------------
log "case 4: an nft table of family bridge in the host namespace"
{ ip netns exec "$HOST_NS" nft add table bridge unetback_it &&
  ip netns exec "$HOST_NS" nft add chain bridge unetback_it guests \
    '{ type filter hook forward priority 0; policy accept; }' &&
  ip netns exec "$HOST_NS" nft add rule bridge unetback_it guests counter; } ||
  fail "cannot add an nft bridge table (nf_tables)"
wait_for 5 "an nft bridge table to stop the direct path" pair_is "off: ebtables or nft bridge rules"
transfer_through_taps yes 2 1
seen=$(ip netns exec "$HOST_NS" nft list chain bridge unetback_it guests |
  grep -o 'counter packets [0-9]* bytes [0-9]*' | grep -o '[0-9]*$' || true)
assert_at_least "bytes the nft bridge rule counted" "${seen:-0}" "$BYTES"
ip netns exec "$HOST_NS" nft delete table bridge unetback_it || fail "cannot delete the nft table"
assert_direct_again

# ---- 5. VLAN filtering -----------------------------------------------------
# A kernel built without CONFIG_BRIDGE_VLAN_FILTERING has no such switch (no
# bridge/vlan_filtering in sysfs; netlink answers EOPNOTSUPP): no bridge there
# can filter by VLAN, and the case cannot be caused.
if ip netns exec "$HOST_NS" test -e "/sys/class/net/$BRIDGE/bridge/vlan_filtering"; then
  log "case 5: VLAN filtering on the bridge"
  ip -n "$HOST_NS" link set "$BRIDGE" type bridge vlan_filtering 1 ||
    fail "cannot switch VLAN filtering on"
  wait_for 5 "VLAN filtering to stop the direct path" pair_is "off: bridge VLAN filtering"
  transfer_through_taps yes 1 2
  ip -n "$HOST_NS" link set "$BRIDGE" type bridge vlan_filtering 0 ||
    fail "cannot switch VLAN filtering off"
  assert_direct_again
else
  log "case 5 NOT RUN: this kernel ($(uname -r)) has no bridge VLAN filtering" \
    "(CONFIG_BRIDGE_VLAN_FILTERING): /sys/class/net/$BRIDGE/bridge/vlan_filtering is absent"
fi
log "PASS"
