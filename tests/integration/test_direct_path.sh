#!/usr/bin/env bash
# The direct path (issue #20, docs/direct-path.md), on the sim platform: two
# guests of 2 queues on one bridge, unetbackd with --direct-path true. Once the
# bridge has learned both guests' MACs the pair goes direct: 10^8 bytes each
# way between the guests arrive intact (payload-check) while neither TAP
# carries them. Then each fallback the host can cause takes the pair back to
# the TAP path within the probe interval, and traffic then crosses the TAPs:
# a packet socket on a vif (what tcpdump opens), br_netfilter switched on
# (where the module is loaded), the ports isolated (then no frame passes at all). Traffic to the host goes through the TAP throughout.
# While the guests' unicast goes direct, learning frames keep their MACs in the
# bridge's FDB (a 6 s ageing time, 15 s of direct pings: no fallback).
# The other fallbacks (broadcast, a spoofed source MAC, MTU, an nft bridge table,
# VLAN filtering) are test_direct_path_fallbacks.sh's; both use direct_path_lib.sh.
source "$(dirname "$0")/lib.sh"
BYTES=${UNETBACK_DIRECT_BYTES:-100000000}
source "$(dirname "$0")/direct_path_lib.sh"
start_xenstored
start_host_ns
start_daemon --max-queues 2 --direct-path true
start_guest 1 2
start_guest 2 2

udp_port_bound() {  # udp_port_bound NETNS PORT
  [[ -n "$(ip netns exec "$1" ss -Hlun "sport = :$2")" ]]
}

# udp_flows FROM TO N: N UDP request/response flows, each from its own port, so
# that the guests' queue choice (a flow hash) spreads them over both queues.
udp_flows() {
  local port=5303
  ip netns exec "$(guest_ns "$2")" timeout 20 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(data, peer)' "$(guest_ip "$2")" "$port" &
  local server=$!
  # The server must be bound before the first flow: under load Python took
  # longer to start than a fixed pause, and the first flows went unanswered.
  wait_for 10 "the UDP echo server in guest $2" udp_port_bound "$(guest_ns "$2")" "$port"
  ip netns exec "$(guest_ns "$1")" python3 -c '
import socket, sys
answered = 0
for i in range(int(sys.argv[3])):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(b"flow %d" % i, (sys.argv[1], int(sys.argv[2])))
    try:
        answered += s.recv(2048) == b"flow %d" % i
    except socket.timeout:
        pass
sys.exit(0 if answered == int(sys.argv[3]) else 1)' "$(guest_ip "$2")" "$port" "$3" ||
    fail "UDP flows guest $1 -> guest $2 went unanswered"
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
}

learn_macs
wait_for 5 "the pair to go direct" pair_is on
transfer_through_taps no 1 2
transfer_through_taps no 2 1
# One TCP flow each way may hash to one queue; 32 flows miss a queue with p = 2^-31.
udp_flows 2 1 32
assert_all_queues_moved vif1.0 2
# The daemon counts what the TAPs did not: both ways, on both vifs.
for pair in vif1.0:vif2.0 vif2.0:vif1.0; do
  v=${pair%:*}
  [[ $(ctl stats "$v" --json | jq -r '.[0].direct.peers | join(" ")') == "${pair#*:}" ]] ||
    fail "$v: its peer is not shown: $(ctl stats "$v" --json | jq -c '.[0].direct')"
  ((BYTES <= $(direct_sum "$v" tx_bytes) && BYTES <= $(direct_sum "$v" rx_bytes))) ||
    fail "$v: direct counters below the transfers: $(ctl stats "$v" --json | jq -c '.[0].direct')"
done
grep -q '^unetback_direct_tx_bytes_total{vif="vif1.0",[^}]*} [1-9]' <<<"$(ctl metrics)" ||
  fail "no unetback_direct_tx_bytes_total sample for vif1.0"
ip netns exec "$(guest_ns 1)" ping -q -c 2 -i 0.2 "$HOST_IP" >/dev/null ||
  fail "guest 1 cannot reach the host while direct"

# The bridge keeps learning: with an ageing time of 6 s, 15 s of pings that all go
# direct would let both FDB entries expire (and the pair fall back) but for the
# learning frames each guest's queue writes through its TAP. The entries are
# first made fresh by a broadcast from each guest (it crosses the bridge): one
# last heard more than 6 s ago would expire as soon as the ageing time drops,
# before the daemon's next probe could ask for a learning frame.
set_ageing() { ip -n "$HOST_NS" link set "$BRIDGE" type bridge ageing_time "$1"; }
for g in 1 2; do
  ip netns exec "$(guest_ns "$g")" ping -q -b -c 1 -W 1 198.18.0.255 >/dev/null 2>&1 || true
done
set_ageing 600
verdicts_before=$(verdicts)
ip netns exec "$(guest_ns 1)" ping -q -c 75 -i 0.2 "$(guest_ip 2)" >/dev/null ||
  fail "guest 1 cannot ping guest 2 while direct"
verdicts_after=$(verdicts)
((verdicts_after == verdicts_before)) ||
  fail "the pair changed verdict under a 6 s ageing time: $(grep "direct path vif1.0 <-> vif2.0: " \
    "$LOGS/unetbackd.log" | tail -n +"$((verdicts_before + 1))" | head -3)"
for v in vif1.0 vif2.0; do
  n=$(direct_sum "$v" learning_frames)
  log "$v: $n learning frames"
  ((n > 0)) || fail "$v wrote no learning frame for the bridge"
  ip netns exec "$HOST_NS" bridge -j fdb show br "$BRIDGE" | jq -e --arg v "$v" \
    --arg m "$(guest_mac "${v:3:1}")" '.[] | select(.ifname == $v and .mac == $m)' >/dev/null ||
    fail "the bridge's FDB lost $v's guest MAC"
done
set_ageing 30000

# A packet socket bound to vif1.0, as tcpdump opens one.
ip netns exec "$HOST_NS" python3 -c '
import socket, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("vif1.0", 0))
time.sleep(120)' &
CAPTURE=$!
PIDS+=("$CAPTURE")
wait_for 5 "a packet socket on vif1.0 to stop the direct path" pair_is "off: packet socket open"
grep "direct path vif1.0 <-> vif2.0: off" "$LOGS/unetbackd.log" | tail -1 | grep -q "vif1.0)" ||
  fail "the log line does not name vif1.0"
transfer_through_taps yes 1 2
kill "$CAPTURE"
learn_macs
wait_for 5 "the pair to go direct again" pair_is on

bridge_nf_call 1
if [[ -e /proc/sys/net/bridge ]]; then
  wait_for 5 "br_netfilter to stop the direct path" pair_is "off: br_netfilter active"
  transfer_through_taps yes 2 1
  bridge_nf_call 0
  learn_macs
  wait_for 5 "the pair to go direct again" pair_is on
fi

# Isolated ports: the bridge forwards nothing between them, and neither may the daemon.
for v in vif1.0 vif2.0; do
  ip netns exec "$HOST_NS" bridge link set dev "$v" isolated on
done
wait_for 5 "isolated ports to stop the direct path" pair_is "off: bridge port isolated"
ip netns exec "$(guest_ns 1)" ping -q -c 2 -W 1 "$(guest_ip 2)" >/dev/null &&
  fail "isolated guests still reach each other"
log "PASS"
