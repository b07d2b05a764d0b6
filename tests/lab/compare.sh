#!/bin/bash
# Kernel xen-netback vs unetbackd in one boot, alternated over rounds: TCP bulk both ways, TCP request/response, UDP ping-pong at 1 and 2 queues, dom0 CPU per GB.
# knobs: lab.compare_rounds=N (rounds; each measures every backend once, default 3)
#        lab.secs=N (iperf3 seconds per bulk run, default 6)  lab.rr_secs=N (sockperf, default 4)
#        lab.queues=1_2
#        lab.variants=NAME:FLAG:VALUE+NAME2:...  also measure unetbackd with these extra
#        flags (':' stands for a space), e.g. lab.variants=poll0:--poll-us:0; every round
#        then runs netback, unetbackd, unetbackd-NAME, ... in that order. A NAME that
#        starts with b- runs the second build (xen-lab run --unetbackd-b PATH)
#        lab.g2g=1 also guest to guest: a second guest on the same bridge, TCP bulk (one
#        stream per queue) and UDP ping-pong from the first guest to it; lab.g2g=only
#        runs just those (issue #20)
#        lab.guest_sysctl=KEY=VALUE+KEY2=VALUE2  set in every guest after it boots (e.g.
#        net.ipv4.tcp_min_tso_segs=44: the senders' TSO frames no longer follow their
#        pacing rate)
# Every measurement is one "sample" line (round, backend, queues, test, value, dom0 CPU);
# the host turns them into medians, ratios, a table, JSON and a plot
# (tools/xen-lab/lib/compare_report.py, docs/lab.md).
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
ROUNDS=${LAB_COMPARE_ROUNDS:-3}; SECS=${LAB_SECS:-6}; RR_SECS=${LAB_RR_SECS:-4}
QUEUES=${LAB_QUEUES:-1_2}; QUEUES=${QUEUES//_/ }
G2G=${LAB_G2G:-0}
setup_bridge
# one guest for every run: vifs are hot-plugged, netfront's max_queues is set before each
guest_create cmp 2 256 ""
DOMID=$(domid_of cmp)
# the guest-to-guest peer, hot-plugged the same way; PEER_DEVID: its vif of this run
PEER_DEVID=
if [ "$G2G" != 0 ]; then guest_create peer 2 256 ""; PEER_DOMID=$(domid_of peer); fi
for kv in ${LAB_GUEST_SYSCTL//+/ }; do
  for g in cmp $([ "$G2G" != 0 ] && echo peer); do
    guest_cmd "$g" "sysctl -w $kv" >/dev/null || fail "guest $g: sysctl -w $kv"
  done
  result "guest_sysctl $kv"
done

# backend_ticks BACKEND DEVID: CPU ticks of the backend's own threads so far (unetbackd:
# the daemon; the kernel netback: its vifD.N-q* kthreads, the peer's too while it has a
# vif; its NAPI work is softirq time)
backend_ticks() {
  case "$1" in
    netback)
      local t; t=$(kthread_ticks "vif$DOMID.$2-")
      [ -n "$PEER_DEVID" ] && t=$((t + $(kthread_ticks "vif$PEER_DOMID.$PEER_DEVID-")))
      echo "$t" ;;
    *) proc_ticks "$(unetbackd_pid)" ;;
  esac
}

# netfront_max_queues GUEST Q: the queues GUEST's netfront asks for on its next vif
netfront_max_queues() {
  guest_cmd "$1" "echo $2 > /sys/module/xen_netfront/parameters/max_queues" >/dev/null ||
    { check_fail "set $1's netfront max_queues to $2"; return 1; }
}

# sample ROUND BACKEND Q DEVID TEST VALUE UNIT [k=v...]: one measurement with the CPU
# readings taken around it (A_* before, B_* after; ticks)
sample() {
  local r=$1 be=$2 q=$3 devid=$4 test=$5 value=$6 unit=$7; shift 7
  result "sample round=$r backend=$be q=$q test=$test value=$value unit=$unit $*" \
    "dom0_busy_s=$(ticks_s $((B_BUSY - A_BUSY))) dom0_steal_s=$(ticks_s $((B_STEAL - A_STEAL)))" \
    "dom0_softirq_s=$(ticks_s $((B_SOFTIRQ - A_SOFTIRQ))) backend_s=$(ticks_s $((B_BE - A_BE)))"
}
before() { cpu_sample; A_BUSY=$CPU_BUSY; A_STEAL=$CPU_STEAL; A_SOFTIRQ=$CPU_SOFTIRQ; A_BE=$(backend_ticks "$1" "$2"); }
after() { cpu_sample; B_BUSY=$CPU_BUSY; B_STEAL=$CPU_STEAL; B_SOFTIRQ=$CPU_SOFTIRQ; B_BE=$(backend_ticks "$1" "$2"); }

# host_tests ROUND BACKEND Q DEVID IP: dom0 <-> the guest: TCP bulk both ways, TCP
# request/response and UDP ping-pong
host_tests() {
  local r=$1 be=$2 q=$3 devid=$4 ip=$5 dir m rr
  for dir in to_guest from_guest; do   # one stream per queue
    before "$be" "$devid"; iperf_exec "$ip" "$SECS" "$q" $dir; after "$be" "$devid"
    if m=$(iperf_parse); then
      # shellcheck disable=SC2086  # "MBPS BYTES SECONDS": split into $1..$3 on purpose
      set -- $m
      sample "$r" "$be" "$q" "$devid" "tcp_$dir" "$1" mbps "streams=$q bytes=$2 secs=$3"
    else check_fail "backend=$be q=$q round=$r iperf3 $dir"; fi
  done
  for rr in tcp udp; do   # one request in flight: the latency of a round trip
    before "$be" "$devid"
    if sockperf_exec "$ip" "$RR_SECS" "$rr" && after "$be" "$devid" && m=$(sockperf_parse); then
      local t=tcp_rr; [ $rr = udp ] && t=udp_pp
      sample "$r" "$be" "$q" "$devid" "$t" "$m" us "secs=$RR_SECS"
    else check_fail "backend=$be q=$q round=$r sockperf $rr"; fi
  done
}

# direct_verdict VIF_A VIF_B: the running daemon's last verdict on the pair
# (--direct-path), "verdict=on" or "verdict=off:_<why>"; nothing when it judged no such
# pair (devids are reused, so earlier daemons' lines do not count)
direct_verdict() {
  tail -n +"${UNETBACKD_LOG_LINE:-1}" "$UNETBACKD_LOG" 2>/dev/null | grep -a "direct path .*<->" |
    grep -wF "$1" | grep -wF "$2" | tail -1 |
    sed 's/.*direct path [^ ]* <-> [^ ]*: //; s/ /_/g; s/^/verdict=/'
}

# guest_tests ROUND BACKEND Q DEVID MAC_LOW: the peer gets a vif with Q queues too; from
# the first guest to it TCP bulk (one stream per queue) and UDP ping-pong
guest_tests() {
  local r=$1 be=$2 q=$3 devid=$4 mac ip m
  mac=$(lab_mac 4 "$5"); ip=$(lab_ip 4 "$5")
  netfront_max_queues peer "$q" || return
  PEER_DEVID=$(vif_attach peer "$mac") || { PEER_DEVID=; return; }
  if ! wait_ping "$ip" 20; then check_fail "backend=$be q=$q: no ping to the peer $ip"
  else
    before "$be" "$devid"; iperf_exec "$ip" "$SECS" "$q" to_guest cmp; after "$be" "$devid"
    if m=$(iperf_parse); then
      # shellcheck disable=SC2086  # "MBPS BYTES SECONDS": split into $1..$3 on purpose
      set -- $m
      sample "$r" "$be" "$q" "$devid" g2g_tcp "$1" mbps "streams=$q bytes=$2 secs=$3"
    else check_fail "backend=$be q=$q round=$r iperf3 guest to guest"; fi
    before "$be" "$devid"
    if sockperf_exec "$ip" "$RR_SECS" udp cmp && after "$be" "$devid" && m=$(sockperf_parse); then
      sample "$r" "$be" "$q" "$devid" g2g_udp_pp "$m" us "secs=$RR_SECS"
    else check_fail "backend=$be q=$q round=$r sockperf guest to guest"; fi
  fi
  if [ "$be" != netback ] && unetbackd_ctl_ok; then
    unetbackd_stats "vif$PEER_DOMID.$PEER_DEVID" | python3 /lab/labtool.py queue-counters |
      while read -r line; do result "counters round=$r backend=$be q=$q peer $line"; done
    direct_verdict "vif$DOMID.$devid" "vif$PEER_DOMID.$PEER_DEVID" |
      while read -r line; do result "direct round=$r backend=$be q=$q $line"; done
  fi
  vif_detach peer "$PEER_DEVID"; PEER_DEVID=
}

measure() {   # measure ROUND BACKEND Q MAC_LOW
  local r=$1 be=$2 q=$3 mac ip devid irq0 irq1 nq
  mac=$(lab_mac 3 "$4"); ip=$(lab_ip 3 "$4")
  netfront_max_queues cmp "$q" || return
  devid=$(vif_attach cmp "$mac") || return
  nq=$(xenstore-read "/local/domain/$DOMID/device/vif/$devid/multi-queue-num-queues" 2>/dev/null || echo 1)
  [ "$nq" = "$q" ] || check_fail "backend=$be wanted $q queues, frontend uses $nq"
  wait_ping "$ip" 20 || { check_fail "backend=$be q=$q: no ping to $ip"; vif_detach cmp "$devid"; return; }
  irq0=$(guest_queue_irqs cmp "$devid")
  [ "$G2G" != only ] && host_tests "$r" "$be" "$q" "$devid" "$ip"
  [ "$G2G" != 0 ] && guest_tests "$r" "$be" "$q" "$devid" "$4"
  irq1=$(guest_queue_irqs cmp "$devid")
  result "attach round=$r backend=$be q=$q attach_ms=$(attach_ms) guest_queue_irqs_before=$irq0 after=$irq1"
  if [ "$be" != netback ] && unetbackd_ctl_ok; then
    unetbackd_stats "vif$DOMID.$devid" | python3 /lab/labtool.py queue-counters |
      while read -r line; do result "counters round=$r backend=$be q=$q $line"; done
  fi
  # with split channels each queue's interrupts are named vifN-qK-tx/-rx (a single channel
  # is named after the guest's netdev, the same for every queue)
  if xenstore-read "/local/domain/$DOMID/device/vif/$devid/queue-0/event-channel-tx" >/dev/null 2>&1 ||
     xenstore-read "/local/domain/$DOMID/device/vif/$devid/event-channel-tx" >/dev/null 2>&1; then
    irqs_moved "$irq0" "$irq1" || check_fail "backend=$be q=$q round=$r: a netfront queue saw no interrupts"
  fi
  vif_detach cmp "$devid" && result "detach round=$r backend=$be q=$q detach_ms=$DETACH_MS"
}

BACKENDS="netback"; declare -A FLAGS
if unetbackd_present; then
  BACKENDS="$BACKENDS unetbackd"; FLAGS[unetbackd]=""
  for v in $(lab_variants); do
    name=$(variant_backend "$v"); BACKENDS="$BACKENDS $name"
    FLAGS[$name]=$(variant_flags "$v")
  done
fi
result "meta rounds=$ROUNDS secs=$SECS rr_secs=$RR_SECS queues=${QUEUES// /_} g2g=$G2G backends=${BACKENDS// /,} guest_sysctl=${LAB_GUEST_SYSCTL:-none}"

for r in $(seq 1 "$ROUNDS"); do
  i=0
  for be in $BACKENDS; do
    i=$((i + 1)); mark "round $r $be"
    if [ "$be" = netback ]; then
      netback_load 2
      for q in $QUEUES; do measure "$r" netback "$q" $((10 * i + q)); done
      netback_unload || fail "rmmod xen-netback"
    else
      bin=$UNETBACKD; [[ $be == unetbackd-b-* ]] && bin=/usr/local/bin/unetbackd-b
      # shellcheck disable=SC2086  # daemon flags, split into words on purpose
      UNETBACKD=$bin unetbackd_start ${UNETBACKD_ARGS:---max-queues 2} ${FLAGS[$be]}
      for q in $QUEUES; do measure "$r" "$be" "$q" $((10 * i + q)); done
      unetbackd_stop || check_fail "$be: unetbackd exit status $UNETBACKD_RC"
    fi
  done
done

# what the daemons measured of this dom0 for poll-us = auto (wake_cost.hpp)
grep -a 'waking a thread costs' "$UNETBACKD_LOG" 2>/dev/null | tail -1 | sed 's/.*costs \([0-9]*\) us.*up to \([0-9]*\) us.*/wake_cost_us=\1 auto_poll_us=\2/' |
  while read -r line; do result "daemon $line"; done
if ! unetbackd_present; then
  result "unetbackd=absent (only the kernel netback was measured)"
  [ "$(failed_checks)" -gt 0 ] && finish
  exit 77
fi
finish
