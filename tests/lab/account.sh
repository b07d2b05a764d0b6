#!/bin/bash
# Per-packet cost account, kernel netback and unetbackd in one boot: system calls, hypercall paths, wake-ups and dom0 CPU per MB (bulk) and per transaction (ping-pong), and where dom0's time goes.
# knobs: lab.secs=N (iperf3 seconds, default 6)  lab.rr_secs=N (sockperf, default 4)
#        lab.queues=N (netfront queues, default 1)  lab.profile=0 (no perf profiles)
#        lab.variants=NAME:FLAG:VALUE+...  also account unetbackd with these extra flags
#        (':' stands for a space; as compare's), as backend unetbackd-NAME
#        lab.g2g=1 also guest to guest: a second guest on the bridge, TCP bulk and UDP
#        ping-pong from the first guest to it (tests g2g_tcp, g2g_udp_pp; both guests'
#        backend threads are counted); lab.g2g=only: guest to guest only
#        lab.xentrace=1 one more run of each test under xentrace: Xen's work per unit
#        for each domain (hypercalls by operation, traps, page faults, emulated
#        page-table writes; xentrace_count.py)
# Counting is done by the kernel (perf's tracepoint and kprobe counters), never by
# forking per event: the readings must not cost what they measure. Lines:
#   account backend=B test=T unit=MB|transaction per_unit_<what>=X ...
#   profile backend=B test=T rank=N pct=P comm=C sym=S
#   hypervisor backend=B test=T unit=U rate=R dom=D trace_s=S count_hc_<op>=N count_pv_<entry>=N ...
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
SECS=${LAB_SECS:-6}; RR_SECS=${LAB_RR_SECS:-4}; Q=${LAB_QUEUES:-1}; G2G=${LAB_G2G:-0}
setup_bridge
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
guest_create acct 2 256 ""
guest_cmd acct "echo $Q > /sys/module/xen_netfront/parameters/max_queues" >/dev/null
DOMID=$(domid_of acct)
PEER_DOMID=-
if [ "$G2G" != 0 ]; then
  guest_create peer 2 256 ""
  guest_cmd peer "echo $Q > /sys/module/xen_netfront/parameters/max_queues" >/dev/null
  PEER_DOMID=$(domid_of peer)
fi

# Kernel functions that stand for the costs both backends share (all in the PV kernel):
#   gnttab_batch_copy      one GNTTABOP_copy hypercall (gntdev splits ioctls into 16-op batches)
#   pin_user_pages_fast    gntdev pinning one page of the daemon's buffer per copy op
#   gnttab_map_refs / gnttab_unmap_refs   netback's grant maps of guest TX pages
#   notify_remote_via_irq  netback kicking the guest
#   evtchn_interrupt       an event for a userspace port (unetbackd's)
#   xen_irq_lateeoi        re-enabling an event (both)
#   tun_net_xmit / tun_chr_read_iter / tun_get_user   frames into, out of, into the TAP
KPROBES="gnttab_batch_copy pin_user_pages_fast gnttab_map_refs gnttab_unmap_refs notify_remote_via_irq evtchn_interrupt xen_irq_lateeoi tun_net_xmit tun_chr_read_iter tun_get_user"
kprobe_events() {   # registers what exists now (module functions once loaded); prints the event list
  local f ev="" t=/sys/kernel/tracing
  for f in $KPROBES; do
    [ -d "$t/events/kprobes/acct_$f" ] || echo "p:acct_$f $f" >>"$t/kprobe_events" 2>/dev/null
    [ -d "$t/events/kprobes/acct_$f" ] && ev="$ev,kprobes:acct_$f"
  done
  echo "${ev#,}"
}
SYSCALLS="raw_syscalls:sys_enter,syscalls:sys_enter_ioctl,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_poll,syscalls:sys_enter_clock_gettime"

# backend_tids BACKEND: the threads whose wake-ups and system calls are the backend's
backend_tids() {
  local d comm out=""
  for d in /proc/[0-9]*/task/[0-9]*; do
    read -r comm <"$d/comm" 2>/dev/null || continue
    case "$1:$comm" in
      netback:vif"$DOMID".* | netback:vif"$PEER_DOMID".* | unetbackd*:vif"$DOMID".* | \
        unetbackd*:vif"$PEER_DOMID".*) out="$out,${d##*/}" ;;
    esac
  done
  echo "${out#,}"
}
ctxsw_sum() {   # voluntary + involuntary context switches of the threads in $1 (comma list)
  local t sum=0 k v
  for t in ${1//,/ }; do
    while read -r k v; do
      case "$k" in voluntary_ctxt_switches: | nonvoluntary_ctxt_switches:) sum=$((sum + v)) ;; esac
    done <"/proc/$t/status" 2>/dev/null
  done
  echo $sum
}

# count BACKEND TEST UNIT COMMAND...: runs the load under system-wide kprobe counters and
# per-thread syscall counters of the backend's threads; prints one account line
count() {
  local be=$1 test=$2 unit=$3; shift 3
  local ev tids c0 c1 units
  ev=$(kprobe_events); tids=$(backend_tids "$be")
  perf stat -x, -a -e "$ev" -o /tmp/acct-kp.csv -- sleep $((SECS + 2)) &
  local kp=$!
  if [[ $be == unetbackd* ]] && [ -n "$tids" ]; then
    perf stat -x, -t "$tids" -e "$SYSCALLS" -o /tmp/acct-sc.csv -- sleep $((SECS + 2)) &
  else : >/tmp/acct-sc.csv; fi
  local sc=$!
  sleep 1   # perf attaches slowly under TCG
  cpu_sample; local b0=$CPU_BUSY; c0=$(ctxsw_sum "$tids")
  "$@"
  cpu_sample; local b1=$CPU_BUSY; c1=$(ctxsw_sum "$tids")
  wait $kp $sc 2>/dev/null
  units=$(account_units "$unit") || { check_fail "account $be $test: no result"; return; }
  python3 /lab/labtool.py account "$units" /tmp/acct-kp.csv /tmp/acct-sc.csv |
    sed "s/^/account backend=$be test=$test unit=$unit dom0_busy_s=$(ticks_s $((b1 - b0))) backend_ctxsw=$((c1 - c0)) /" |
    while read -r line; do result "$line"; done
}
# account_units UNIT: MB received (iperf3) or transactions (sockperf) of the last run
account_units() {
  case "$1" in
    MB) iperf_parse | awk '{printf "%.3f\n", $2 / 1e6}' ;;
    transaction) sed -n 's/.*ReceivedMessages=\([0-9]*\).*/\1/p' /tmp/sockperf.out | head -1 ;;
  esac
}

# profile BACKEND TEST COMMAND...: where dom0's time goes (perf sampling, all CPUs)
profile() {
  [ "${LAB_PROFILE:-1}" = 1 ] || return 0
  local be=$1 test=$2; shift 2
  perf record -a -e cpu-clock -F 999 -o /tmp/acct-prof.data -- sleep $((SECS + 1)) >/dev/null 2>&1 &
  local pr=$!
  "$@" >/dev/null 2>&1
  wait $pr
  perf report -i /tmp/acct-prof.data --stdio --no-children --sort comm,sym 2>/dev/null |
    python3 /lab/labtool.py perf-top 25 |
    sed "s/^/profile backend=$be test=$test /" | while read -r line; do result "$line"; done
}

# vif_moved BACKEND VIF WHAT: what BACKEND has moved for VIF so far; WHAT is
# to_guest_bytes, from_guest_bytes or to_guest_packets. The kernel netback: the vif's
# netdev statistics. unetbackd: its queue counters, which count every frame of the
# guest's rings, also those the direct path moves past the TAP (whose statistics
# never see them).
vif_moved() {
  local be=$1 vif=$2 what=$3 field
  if [ "$be" = netback ]; then
    case $what in
      to_guest_bytes) field=tx_bytes ;; from_guest_bytes) field=rx_bytes ;; *) field=tx_packets ;;
    esac
    cat "/sys/class/net/$vif/statistics/$field"
  else
    case $what in
      to_guest_bytes) field=rx_bytes ;; from_guest_bytes) field=tx_bytes ;; *) field=rx_packets ;;
    esac
    queue_counter_sum "$vif" "$field"
  fi
}

# hypervisor BACKEND TEST UNIT LOAD_S VIF WHAT COMMAND...: the load (LOAD_S seconds
# long) once more, traced with xentrace (the PV class and the scheduler's runstate
# changes) in a steady window: from 2 s after it starts (past processes starting,
# which cost page faults and page-table writes per run, not per unit) to 1 s before
# it ends. What the backend moved for VIF (vif_moved WHAT: bytes for MB, packets for
# transactions) is read at both ends of the window and gives the load's rate in it;
# the line carries that rate and the window's counts per domain, and the report
# divides, less the idle pass's rate (lab.xentrace=1). VIF "-": one unit per second.
hypervisor() {
  [ "${LAB_XENTRACE:-0}" = 1 ] || return 0
  local be=$1 test=$2 unit=$3 secs=$4 vif=$5 what=$6 c0=0 c1=0 t0 t1 rate; shift 6
  rm -f /tmp/acct.xt
  "$@" >/dev/null 2>&1 &
  local load=$!
  sleep 2
  t0=$(now_ms)   # each reading follows its time stamp by the same delay
  [ "$vif" = - ] || c0=$(vif_moved "$be" "$vif" "$what")
  xentrace -e 0x0022f000 -S 1024 /tmp/acct.xt >/dev/null 2>&1 &
  local xt=$!
  sleep $((secs - 3))
  kill -INT "$xt"; wait "$xt"
  t1=$(now_ms)
  [ "$vif" = - ] || c1=$(vif_moved "$be" "$vif" "$what")
  wait "$load"
  case "$unit" in
    second) rate=1 ;;
    MB) rate=$(fcalc "($c1 - $c0) / 1e6 * 1000 / ($t1 - $t0)") ;;
    *) rate=$(fcalc "($c1 - $c0) * 1000 / ($t1 - $t0)") ;;
  esac
  python3 /lab/xentrace_count.py /tmp/acct.xt "$TSC_MHZ" |
    sed "s/^/hypervisor backend=$be test=$test unit=$unit rate=$rate /" |
    while read -r line; do result "$line"; done
  rm -f /tmp/acct.xt
}
TSC_MHZ=$(xl info | sed -n 's/^cpu_mhz *: *//p')
HSECS=$((SECS + 4)); HRR_SECS=$((RR_SECS + 4))   # the traced runs: a 3 s longer window

# guest_to_guest BACKEND MAC_LOW: the peer gets a vif; from the first guest to it TCP
# bulk and UDP ping-pong, counted and profiled like dom0's tests
guest_to_guest() {
  local be=$1 mac ip devid
  mac=$(lab_mac 5 "$2"); ip=$(lab_ip 5 "$2")
  devid=$(vif_attach peer "$mac") || return
  local vif=vif$PEER_DOMID.$devid   # the units: what reached the peer
  if wait_ping "$ip" 20; then
    count "$be" g2g_tcp MB iperf_exec "$ip" "$SECS" "$Q" to_guest acct
    profile "$be" g2g_tcp iperf_exec "$ip" "$SECS" "$Q" to_guest acct
    hypervisor "$be" g2g_tcp MB "$HSECS" "$vif" to_guest_bytes iperf_exec "$ip" "$HSECS" "$Q" to_guest acct
    count "$be" g2g_udp_pp transaction sockperf_exec "$ip" "$RR_SECS" udp acct
    profile "$be" g2g_udp_pp sockperf_exec "$ip" "$RR_SECS" udp acct
    hypervisor "$be" g2g_udp_pp transaction "$HRR_SECS" "$vif" to_guest_packets sockperf_exec "$ip" "$HRR_SECS" udp acct
  else check_fail "$be: no ping to the peer $ip"; fi
  vif_detach peer "$devid"
}

measure() {   # measure BACKEND MAC_LOW
  local be=$1 mac ip devid
  mac=$(lab_mac 4 "$2"); ip=$(lab_ip 4 "$2")
  devid=$(vif_attach acct "$mac") || return
  wait_ping "$ip" 20 || { check_fail "$be: no ping"; vif_detach acct "$devid"; return; }
  local dir vif=vif$DOMID.$devid
  if [ "$G2G" != only ]; then
    for dir in to_guest from_guest; do
      count "$be" "tcp_$dir" MB iperf_exec "$ip" "$SECS" "$Q" "$dir"
      profile "$be" "tcp_$dir" iperf_exec "$ip" "$SECS" "$Q" "$dir"
      hypervisor "$be" "tcp_$dir" MB "$HSECS" "$vif" "${dir}_bytes" iperf_exec "$ip" "$HSECS" "$Q" "$dir"
    done
    count "$be" udp_pp transaction sockperf_exec "$ip" "$RR_SECS"
    profile "$be" udp_pp sockperf_exec "$ip" "$RR_SECS"
    hypervisor "$be" udp_pp transaction "$HRR_SECS" "$vif" to_guest_packets sockperf_exec "$ip" "$HRR_SECS"
  fi
  [ "$G2G" != 0 ] && guest_to_guest "$be" "$2"
  vif_detach acct "$devid"
}

hypervisor none idle second "$HRR_SECS" - - sleep "$HRR_SECS"
netback_load 2
measure netback 11
netback_unload || fail "rmmod xen-netback"
if ! unetbackd_present; then
  result "unetbackd=absent (only the kernel netback was measured)"
  exit 77
fi
# shellcheck disable=SC2086  # daemon flags, split into words on purpose
unetbackd_start ${UNETBACKD_ARGS:---max-queues 2}
measure unetbackd 21
unetbackd_stop || check_fail "unetbackd exit status $UNETBACKD_RC"
i=2
for v in $(lab_variants); do
  i=$((i + 1)); be=$(variant_backend "$v")
  # shellcheck disable=SC2046,SC2086  # daemon flags, split into words on purpose
  unetbackd_start ${UNETBACKD_ARGS:---max-queues 2} $(variant_flags "$v")
  measure "$be" $((10 * i + 1))
  unetbackd_stop || check_fail "$be exit status $UNETBACKD_RC"
done
finish
