# shellcheck shell=bash
# Helpers for the lab scenarios (tests/lab/*.sh), which run as bash inside the lab dom0:
#   . /lab/lab-lib.sh
# Output protocol (collected on the host by tools/xen-lab/lib/boot.sh):
#   LAB-MARK <what> uptime=S           progress
#   LAB-RESULT scenario=S key=v ...    results
#   LAB-FAIL scenario=S <reason>       a failed check (fail exits the scenario with 1)
# Polling loops are bounded by time ($SECONDS), never by counts: under QEMU TCG every
# fork costs milliseconds and iteration counts overrun badly.

SCENARIO=${LAB_SCENARIO:-adhoc}
UNETBACKD=${UNETBACKD:-/usr/local/bin/unetbackd}
UNETBACKCTL=${UNETBACKCTL:-/usr/local/bin/unetbackctl}
UNETBACKD_LOG=/var/log/unetbackd.log
GUEST_KERNEL=/lab/domu/vmlinuz
GUEST_INITRD=/lab/domu/initrd.cpio.gz
DOM0_IP=198.18.0.1
FAILS_FILE=/tmp/lab-fails.$SCENARIO
: >"$FAILS_FILE"
# fd 3 is the console even inside $(...), so helpers that return a value can still report
exec 3>&1

up() { cut -d' ' -f1 /proc/uptime; }
mark() { echo "LAB-MARK $* uptime=$(up)" >&3; }
result() { echo "LAB-RESULT scenario=$SCENARIO $*" >&3; }
fcalc() { awk "BEGIN{printf \"%.2f\n\", $*}"; }
now_ms() { awk '{printf "%d\n", $1 * 1000}' /proc/uptime; }

# fail REASON: report, dump diagnostics, end the scenario with status 1
# (from inside $(...) it ends only that subshell: use check_fail there)
fail() {
  echo "LAB-FAIL scenario=$SCENARIO $*" >&3
  dump_diagnostics >&3
  exit 1
}
# check_fail REASON: report a failed check and carry on; finish then exits non-zero
check_fail() { echo "LAB-FAIL scenario=$SCENARIO $*" >&3; echo "$*" >>"$FAILS_FILE"; }
failed_checks() { wc -l <"$FAILS_FILE"; }
# (lab.dump=1: the diagnostics also when everything passed)
finish() {
  if [ "$(failed_checks)" -gt 0 ]; then dump_diagnostics >&3; exit 1; fi
  [ "${LAB_DUMP:-0}" = 1 ] && dump_diagnostics >&3
  exit 0
}

dump_diagnostics() {
  echo "----- diagnostics ($SCENARIO) -----"
  xl list 2>&1
  lsmod | grep -E 'xen_netback|xen_netfront' || echo "(xen-netback not loaded)"
  echo "--- backend/vif in XenStore"
  xenstore-ls -f /local/domain/0/backend/vif 2>&1 | grep -E '/(state|online|hotplug-status|hotplug-error|multi-queue-max-queues)' | head -40
  if [ -f "$UNETBACKD_LOG" ]; then echo "--- tail of $UNETBACKD_LOG"; tail -"${LAB_LOG_LINES:-40}" "$UNETBACKD_LOG"; fi
  local f
  for f in /var/log/xen/console/guest-*.log; do
    [ -f "$f" ] || continue
    echo "--- tail of $f"; tail -15 "$f" | sed 's/^/[guest] /'
  done
  for f in /var/log/xen/xl-*.log; do
    [ -f "$f" ] || continue
    echo "--- tail of $f"; tail -8 "$f"
  done
  echo "--- processes"
  # shellcheck disable=SC2009  # pgrep cannot print the stat/etime/time columns wanted here
  ps -eo pid,stat,etime,time,args 2>/dev/null | grep -a -E 'unetback|iperf|sockperf|xl |hotplug|vif-' | grep -v grep | head -15
  echo "--- tail of xl dmesg"; xl dmesg 2>/dev/null | tail -8
  echo "--- dom0 dmesg (xen/vif/tap/segfault/hung)"; dmesg | grep -a -i -E 'xen|vif|tap|segfault|traps|blocked for|oom|BUG|WARNING' | tail -20
  echo "-----"
}

# ---- addresses: lab MAC 00:16:3e:5a:HH:LL <-> guest address 198.18.HH.LL (see domU/init)
lab_mac() { printf '00:16:3e:5a:%02x:%02x\n' "$1" "$2"; }
lab_ip() { echo "198.18.$1.$2"; }

setup_bridge() {
  modprobe bridge
  ip link show xenbr0 >/dev/null 2>&1 || ip link add xenbr0 type bridge
  ip link set xenbr0 type bridge stp_state 0 forward_delay 0 2>/dev/null || true
  ip addr replace "$DOM0_IP/16" dev xenbr0
  ip link set xenbr0 up
}

# ---- guests
console_log() { echo "/var/log/xen/console/guest-$1.log"; }
domid_of() { xl domid "$1" 2>/dev/null; }

# wait_console NAME PATTERN TIMEOUT_S [COUNT]: PATTERN (grep -E) seen COUNT times (default 1)
wait_console() {
  local f; f=$(console_log "$1"); local end=$((SECONDS + $3)) want=${4:-1}
  while [ $SECONDS -lt $end ]; do
    [ "$(console_count "$1" "$2")" -ge "$want" ] && return 0
    sleep 0.5
  done
  return 1
}
console_count() { local c; c=$(grep -a -c -E -- "$2" "$(console_log "$1")" 2>/dev/null); echo "${c:-0}"; }

# guest_create NAME VCPUS MEM_MB "kernel args" [VIFSPEC ...]
# Starts a PV guest with the lab initrd ($GUEST_INITRD) and waits until it is READY
# (prints nothing). GUEST_CFG_EXTRA: more lines for its xl config (driver_domain = 1).
guest_create() {
  local name=$1 vcpus=$2 mem=$3 extra=$4; shift 4
  local cfg=/tmp/$name.cfg vifs="" v t0
  for v in "$@"; do vifs="$vifs${vifs:+, }'$v'"; done
  cat >"$cfg" <<CFG
name = "$name"
type = "pv"
kernel = "$GUEST_KERNEL"
ramdisk = "$GUEST_INITRD"
extra = "console=hvc0 quiet lab.vifs=$# $extra"
memory = $mem
vcpus = $vcpus
on_crash = "preserve"
vif = [ $vifs ]
${GUEST_CFG_EXTRA:-}
CFG
  rm -f "$(console_log "$name")"
  t0=$(now_ms)
  xl create -q "$cfg" || fail "xl create $name failed"
  wait_console "$name" LAB-DOMU-READY 240 || fail "guest $name did not reach READY"
  result "guest=$name create_to_ready_s=$(fcalc "($(now_ms) - $t0) / 1000")"
}

# guest_cmd NAME "COMMAND" [TIMEOUT_S]: run COMMAND in the guest's console shell (written
# to the console pty that xenconsoled holds), print its output, return its status.
# While it waits, guest_cmd forks nothing: dom0's share of what `account` traces
# during a guest's load would otherwise include ten process starts a second.
guest_cmd() {
  local name=$1 cmd=$2 to=${3:-60} id tty f n start end
  id=$(domid_of "$name") || return 99
  tty=$(xenstore-read "/local/domain/$id/console/tty" 2>/dev/null)
  [ -c "$tty" ] || { echo "guest_cmd: no console pty for $name" >&2; return 99; }
  n=$(now_ms)$RANDOM   # unique per call, also from subshells
  f=$(console_log "$name"); start=$(stat -c %s "$f")
  # the marker is computed by the guest shell, so the shell's echo of this line never matches
  # shellcheck disable=SC2016  # $((..)) and $? are for the guest's shell, not this one
  printf 'echo "LAB-CMD-BEGIN-$((%s+0))"; %s; echo "LAB-CMD-END-$((%s+0)) rc=$?"\n' "$n" "$cmd" "$n" >"$tty"
  end=$((SECONDS + to))
  console_wait "$f" "$start" "LAB-CMD-END-$n rc=" "$end" ||
    { echo "guest_cmd: '$cmd' timed out" >&2; return 98; }
  tail -c +"$((start + 1))" "$f" | tr -d '\r' | awk -v b="LAB-CMD-BEGIN-$n" -v m="LAB-CMD-END-$n rc=" \
    'index($0, m) { s = substr($0, index($0, m) + length(m)); rc = s + 0; exit }
     on { print } index($0, b) == 1 { on = 1 } END { exit rc }'
}

# console_wait FILE OFFSET TEXT END: TEXT appears in FILE after byte OFFSET before
# $SECONDS reaches END; with bash's own reads and naps, no fork
console_wait() {
  local f=$1 text=$3 end=$4 fd seen="" chunk more LC_ALL=C
  exec {fd}<"$f"
  (($2 == 0)) || IFS= read -r -N "$2" -u "$fd" _ || true   # to OFFSET
  while :; do
    more=1
    while ((more)); do   # what the console wrote since, piece by piece between NULs
      IFS= read -r -d '' -u "$fd" chunk || more=0
      ((${#seen} > ${#text})) && seen=${seen: -${#text}}
      seen=$seen$chunk
      [[ $seen == *"$text"* ]] && { exec {fd}<&-; return 0; }
    done
    [ $SECONDS -ge "$end" ] && { exec {fd}<&-; return 1; }
    nap 0.3
  done
}

# nap SECONDS: sleep without a fork (`read -t` on a FIFO that nobody writes)
nap() {
  if [ -z "${NAP_FD:-}" ]; then
    [ -p /run/lab-nap.fifo ] || mkfifo /run/lab-nap.fifo
    exec {NAP_FD}<>/run/lab-nap.fifo
  fi
  read -r -t "$1" -u "$NAP_FD" _ || true
}

# wait_vif DOMID DEVID STATE TIMEOUT_S [BACKEND_DOMID]: backend (dom0's, or a driver
# domain's) and frontend both in xenbus STATE
wait_vif() {
  local be=/local/domain/${5:-0}/backend/vif/$1/$2 fe=/local/domain/$1/device/vif/$2 end=$((SECONDS + $4))
  while [ $SECONDS -lt $end ]; do
    [ "$(xenstore-read "$be/state" 2>/dev/null)" = "$3" ] && [ "$(xenstore-read "$fe/state" 2>/dev/null)" = "$3" ] && return 0
    sleep 0.3
  done
  return 1
}
vif_states() {   # DOMID DEVID [BACKEND_DOMID]: "backend/frontend" xenbus states, e.g. 4/4
  echo "$(xenstore-read "/local/domain/${3:-0}/backend/vif/$1/$2/state" 2>/dev/null || echo -)/$(xenstore-read "/local/domain/$1/device/vif/$2/state" 2>/dev/null || echo -)"
}

# ping_ok IP [COUNT]
ping_ok() { busybox ping -c "${2:-3}" -W 3 "$1" >/tmp/ping.out 2>&1 || { cat /tmp/ping.out; return 1; }; }
# wait_ping IP TIMEOUT_S: first answered ping within the time
wait_ping() {
  local end=$((SECONDS + $2))
  while [ $SECONDS -lt $end ]; do busybox ping -c 1 -W 1 "$1" >/dev/null 2>&1 && return 0; done
  return 1
}

# iperf_exec IP SECS STREAMS DIR [GUEST]: DIR=to_guest (the client sends) | from_guest (-R);
# the client runs in dom0, or in GUEST's console shell; iperf3's JSON in /tmp/iperf.json.
# iperf_parse prints "MBPS BYTES SECONDS" as received (labtool.py iperf).
iperf_exec() {
  local flag=""; [ "$4" = from_guest ] && flag=" -R"
  client_exec "${5:-}" $(($2 + 60)) "iperf3 -c $1 -t $2 -P $3$flag -J --connect-timeout 5000" >/tmp/iperf.json 2>&1
}
iperf_parse() { python3 /lab/labtool.py iperf /tmp/iperf.json || { tail -5 /tmp/iperf.json >&2; return 1; }; }
iperf_run() { iperf_exec "$@"; iperf_parse; }
# iperf_mbps IP SECS STREAMS DIR: the Mbit/s received only
iperf_mbps() { local r; r=$(iperf_run "$@") || return 1; echo "${r%% *}"; }

# sockperf_exec IP SECS [tcp|udp] [GUEST]: ping-pong (64-byte messages, sockperf's default),
# UDP or TCP (the guest runs both servers), from dom0 or from GUEST; sockperf_parse prints
# the average latency in us
sockperf_exec() {
  local tcp=""; [ "${3:-}" = tcp ] && tcp=" --tcp"
  client_exec "${4:-}" $(($2 + 60)) "sockperf ping-pong -i $1 -t $2$tcp --no-rdtsc" >/tmp/sockperf.out 2>&1 ||
    { tail -3 /tmp/sockperf.out >&2; return 1; }
}
# client_exec GUEST TIMEOUT_S "COMMAND": COMMAND in dom0 when GUEST is empty, else in GUEST
client_exec() {
  # shellcheck disable=SC2086  # a command line, split into words on purpose
  if [ -z "$1" ]; then $3; else guest_cmd "$1" "$3" "$2"; fi
}
sockperf_parse() { python3 /lab/labtool.py sockperf /tmp/sockperf.out || { tail -5 /tmp/sockperf.out >&2; return 1; }; }
sockperf_us() { sockperf_exec "$@" && sockperf_parse; }

# ---- CPU accounting without a fork (the readings must not cost what they measure)
# cpu_sample: CPU_BUSY, CPU_STEAL, CPU_SOFTIRQ = USER_HZ ticks of all of dom0's CPUs so far
# (busy = user + nice + system + irq + softirq; steal = time Xen ran something else)
cpu_sample() {
  local _c user nice system _idle _iowait irq softirq steal _rest
  read -r _c user nice system _idle _iowait irq softirq steal _rest </proc/stat
  # shellcheck disable=SC2034  # the results, read by the scenarios (compare.sh)
  CPU_BUSY=$((user + nice + system + irq + softirq)) CPU_STEAL=$steal CPU_SOFTIRQ=$softirq
}
# proc_ticks PID: utime + stime of a process (all its threads), in ticks
proc_ticks() {
  local f; read -r f </proc/"$1"/stat 2>/dev/null || { echo 0; return; }
  f=${f##*) }   # after "pid (comm) ": state is field 1, utime 12, stime 13
  # shellcheck disable=SC2086  # split into the stat fields on purpose
  set -- $f; echo $((${12} + ${13}))
}
# kthread_ticks PREFIX: utime + stime of every thread whose name starts with PREFIX (the
# kernel netback's vifD.N-qK-guest-rx / -dealloc threads)
kthread_ticks() {
  local d comm sum=0
  for d in /proc/[0-9]*; do
    read -r comm <"$d/comm" 2>/dev/null || continue
    case "$comm" in "$1"*) sum=$((sum + $(proc_ticks "${d#/proc/}"))) ;; esac
  done
  echo $sum
}
ticks_s() { fcalc "$1 / 100"; }   # USER_HZ is 100 on x86

# ---- backends
netback_loaded() { [ -d /sys/module/xen_netback ]; }
# netback_load MAX_QUEUES [PARAM=VALUE ...]: the kernel netback, bypassing the lab's
# blacklist, with the module parameters given (e.g. rx_stall_timeout_msecs=5000)
netback_load() {
  local q=$1; shift
  modprobe --ignore-install xen-netback "$@" || fail "modprobe xen-netback $*"
  echo "$q" >/sys/module/xen_netback/parameters/max_queues
}
netback_unload() {
  local end=$((SECONDS + 20))
  while netback_loaded && [ $SECONDS -lt $end ]; do rmmod xen-netback 2>/dev/null || sleep 0.5; done
  ! netback_loaded
}

unetbackd_present() { [ -x "$UNETBACKD" ]; }
# lab.variants=NAME:FLAG:VALUE+NAME2:... (':' stands for a space): the variants one per
# word ($LAB_VARIANTS split at '+'), each's backend name and its extra daemon flags
lab_variants() { echo "${LAB_VARIANTS//+/ }"; }
variant_backend() { echo "unetbackd-${1%%:*}"; }
variant_flags() { [ "$1" != "${1#*:}" ] && echo "${1#*:}" | tr ':' ' '; return 0; }
unetbackd_pid() { cat /run/unetbackd.pid 2>/dev/null; }
unetbackd_alive() { local p; p=$(unetbackd_pid) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# unetbackd_start [ARGS...]: run the daemon in the background (log: $UNETBACKD_LOG).
# lab.daemon_args=--log-level,debug on the xen-lab command line appends flags (commas
# stand for spaces).
unetbackd_start() {
  unetbackd_launch "$@"
  sleep 1
  unetbackd_alive || fail "unetbackd exited at start"
  mark "unetbackd-started pid=$(unetbackd_pid)"
}
# unetbackd_launch [ARGS...]: start the daemon and return at once (no check). Sets
# UNETBACKD_LAUNCH_MS (epoch ms just before the exec, the clock of the daemon's log
# timestamps) and UNETBACKD_LOG_LINE (the log's first line that belongs to this daemon).
# Call it directly, not in $(...): the daemon must be this shell's child (wait, kill).
UNETBACKD_LAUNCH_MS=; UNETBACKD_LOG_LINE=
unetbackd_launch() {
  # shellcheck disable=SC2086  # lab.daemon_args: daemon flags, split into words on purpose
  set -- "$@" ${LAB_DAEMON_ARGS//,/ }
  unetbackd_present || fail "no unetbackd in dom0 (pass --unetbackd to xen-lab)"
  netback_loaded && fail "xen-netback is loaded: unetbackd must not share backend/vif with it"
  echo "=== unetbackd $* (uptime $(up))" >>"$UNETBACKD_LOG"
  # shellcheck disable=SC2034  # read by the scenarios (restart.sh)
  UNETBACKD_LOG_LINE=$(($(wc -l <"$UNETBACKD_LOG") + 1))
  # shellcheck disable=SC2034  # read by the scenarios (restart.sh)
  UNETBACKD_LAUNCH_MS=$(date +%s%3N)
  setsid "$UNETBACKD" --platform xen "$@" >>"$UNETBACKD_LOG" 2>&1 </dev/null &
  echo $! >/run/unetbackd.pid
}

# unetbackd_stop: SIGTERM, wait up to 15 s. Sets UNETBACKD_RC (the exit status, or
# "hang" after which it was killed); returns non-zero unless the daemon exited with 0.
UNETBACKD_RC=
unetbackd_stop() {
  local p end; p=$(unetbackd_pid) || return 0
  kill -TERM "$p" 2>/dev/null
  end=$((SECONDS + 15))
  while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
  if kill -0 "$p" 2>/dev/null; then
    kill -KILL "$p"; wait "$p" 2>/dev/null; UNETBACKD_RC=hang
  else
    wait "$p" 2>/dev/null; UNETBACKD_RC=$?
  fi
  rm -f /run/unetbackd.pid
  [ "$UNETBACKD_RC" = 0 ]
}

# ---- vifs as the toolstack sees them
# devid_by_mac DOMID MAC: the devid libxl chose for the vif with this MAC
devid_by_mac() {
  local d
  for d in $(xenstore-list "/local/domain/0/backend/vif/$1" 2>/dev/null); do
    [ "$(xenstore-read "/local/domain/0/backend/vif/$1/$d/mac" 2>/dev/null)" = "$2" ] && { echo "$d"; return 0; }
  done
  return 1
}
# netlist_state NAME DEVID: the state column of `xl network-list` ("-" when not listed)
netlist_state() { xl network-list "$1" 2>/dev/null | awk -v d="$2" 'NR > 1 && $1 == d {print $5; f = 1} END {if (!f) print "-"}'; }
netlist_count() { xl network-list "$1" 2>/dev/null | awk 'NR > 1 && NF > 0' | wc -l; }

# vif_attach NAME MAC: xl network-attach with the stock hotplug script; prints the devid
# after both ends are Connected and the guest configured the interface (attach_ms: how long)
attach_ms() { cat /tmp/lab-attach-ms 2>/dev/null; }
vif_attach() {
  local name=$1 mac=$2 id n t0 rc devid
  id=$(domid_of "$name"); n=$(console_count "$name" "LAB-DOMU-NET-UP .*mac=$mac")
  t0=$(now_ms)
  xl network-attach "$name" bridge=xenbr0 "mac=$mac" >/tmp/attach.out 2>&1; rc=$?
  [ $rc = 0 ] || { cat /tmp/attach.out; check_fail "xl network-attach $name $mac rc=$rc"; return 1; }
  devid=$(devid_by_mac "$id" "$mac") || { check_fail "no backend node for $mac"; return 1; }
  wait_vif "$id" "$devid" 4 60 || { check_fail "vif $id/$devid not Connected: $(vif_states "$id" "$devid")"; return 1; }
  wait_console "$name" "LAB-DOMU-NET-UP .*mac=$mac" 30 $((n + 1)) || { check_fail "guest did not configure $mac"; return 1; }
  echo $(($(now_ms) - t0)) >/tmp/lab-attach-ms
  echo "$devid"
}
# vif_detach NAME DEVID: xl network-detach; checks that every trace of the vif is gone
vif_detach() {
  local name=$1 devid=$2 id t0 rc
  id=$(domid_of "$name"); t0=$(now_ms)
  xl network-detach "$name" "$devid" >/tmp/detach.out 2>&1; rc=$?
  # shellcheck disable=SC2034  # read by the scenarios (attach-detach.sh, compare.sh)
  DETACH_MS=$(($(now_ms) - t0))
  [ $rc = 0 ] || { cat /tmp/detach.out; check_fail "xl network-detach $name $devid rc=$rc"; return 1; }
  libxl_errors /tmp/detach.out "network-detach $name $devid" || return 1
  vif_released "$id" "$devid" 10
}
# vif_released DOMID DEVID SECS: within SECS the vif's backend node and netdev are gone
# and unetbackd (when running) no longer lists it; each trace left is a check failure
vif_released() {
  local id=$1 devid=$2 end=$((SECONDS + $3)) left
  while left=$(vif_traces "$id" "$devid") && [ $SECONDS -lt $end ]; do sleep 0.3; done
  [ -z "$left" ] && return 0
  check_fail "vif $id/$devid left behind:$left"; return 1
}
# vif_traces DOMID DEVID: prints what is left of the vif; fails when nothing is
vif_traces() {
  local left=
  xenstore-read "/local/domain/0/backend/vif/$1/$2/state" >/dev/null 2>&1 && left+=" backend-node"
  [ -e "/sys/class/net/vif$1.$2" ] && left+=" netdev"
  unetbackd_ctl_ok && "$UNETBACKCTL" list 2>&1 | grep -q -w "vif$1\.$2" && left+=" daemon-vif"
  echo "$left"; [ -n "$left" ]
}

# libxl_errors FILE WHAT: xl's output must not show that libxl gave up waiting for the
# backend (10 s for state 6, LIBXL_DESTROY_TIMEOUT). A hotplug script killed after 40 s is
# reported, not failed: it happens when the emulated CPUs are saturated.
libxl_errors() {
  grep -a -q 'because of timeout' "$1" && result "warning=hotplug-script-timeout during=\"$2\""
  if grep -a -q -E 'unable to remove device|devices_destroy failed|timed out' "$1"; then
    sed 's/^/  xl: /' "$1"; check_fail "$2: libxl gave up waiting for the backend"; return 1
  fi
  return 0
}

# ---- unetbackd's counters: `unetbackctl stats --json` while the daemon serves its control
# socket, and the per-queue "counters at disconnect: {json}" lines of its log
UNETBACKD_SOCKET=/run/unetback/unetbackd.sock
unetbackd_ctl_ok() { [ -x "$UNETBACKCTL" ] && [ -S "$UNETBACKD_SOCKET" ]; }
unetbackd_stats() { "$UNETBACKCTL" stats --json --all "$@" 2>&1; }
# queue_counter_sum VIF COUNTER: COUNTER summed over VIF's queues (`stats --json`)
queue_counter_sum() { "$UNETBACKCTL" stats --json "$1" | python3 /lab/labtool.py queue-counter-sum "$2"; }
# queues_moved BEFORE.json AFTER.json: per-queue deltas of two `stats --json` snapshots;
# fails unless every queue's tx_packets and rx_packets grew
queues_moved() { python3 /lab/labtool.py queues-moved "$1" "$2"; }
# disconnect_counters VIF [QUEUES]: the last connection's per-queue counters of VIF from
# unetbackd's log (written when the vif disconnects); fails unless there are QUEUES queues
# and each one carried tx and rx packets
disconnect_counters() {
  grep -a "$1: counters at disconnect: " "$UNETBACKD_LOG" | sed 's/.*counters at disconnect: //' >/tmp/disconnect.json
  python3 /lab/labtool.py disconnect-counters "${2:-0}" /tmp/disconnect.json
}
# guest_queue_irqs NAME DEVID: interrupts taken by each netfront queue of the guest's vif
# DEVID (tx + rx event channels, or the one shared channel), as "q0,q1,...", e.g. "812,790"
guest_queue_irqs() {
  guest_cmd "$1" "cat /proc/interrupts" | awk -v p="vif$2-q" 'index($NF, p) == 1 {
      n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i
      q = substr($NF, length(p) + 1); sub(/-.*/, "", q); c[q] += n; if (q + 1 > nq) nq = q + 1 }
    END { for (q = 0; q < nq; q++) printf "%s%d", (q ? "," : ""), c[q]; print "" }'
}
# irqs_moved BEFORE AFTER: every queue in AFTER took more interrupts than in BEFORE
irqs_moved() {
  awk -v a="$1" -v b="$2" 'BEGIN { nb = split(b, y, ","); split(a, x, ","); ok = nb > 0
      for (i = 1; i <= nb; i++) if (y[i] + 0 <= x[i] + 0) ok = 0
      exit !ok }'
}
