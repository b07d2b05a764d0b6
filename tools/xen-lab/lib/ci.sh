#!/bin/bash
# xen-lab ci: the lab tier of the CI gate. Decides whether this machine can run the lab,
# builds (or reuses) the images, runs every daemon scenario in ONE boot, and reports each
# scenario separately plus the timings. See docs/lab.md ("The lab tier in CI").
#
#   xen-lab ci [--budget S] [--idle-wait S] [--unetbackd PATH] [--results DIR] [--scenarios a,b,...]
#              [lab.key=value ...]
#
#   --budget S      seconds this tier may take in all, image build included (default
#                   2400, what tools/test passes). It is skipped (77) when the estimate
#                   does not fit.
#   --idle-wait S   at most this long (default 150) for the host to go idle (under
#                   half a core busy over 5 s) before the boot, so that TCG's auto mode can pick
#                   multi-threaded (no wait with UNETBACK_LAB_TCG set or >= 4 cores)
#   --unetbackd     the daemon (default: build/release/bin/unetbackd)
#   --results DIR   per-scenario NAME.rc / NAME.log and summary.txt (default
#                   $LAB/ci-results)
#   --scenarios     default: basic,netfront-sim,hostile,multiqueue,restart,attach-detach,destroy,vifname,guest-lifecycle,reboot-save,rx-stall,driver-domain,compare
#
# Exit: 0 all scenarios passed; 1 a scenario failed or timed out (its lines and
# diagnostics are printed again at the end); 77 skipped (the reason is printed:
# not root, QEMU/debootstrap neither installed nor installable, no Debian mirror for a
# first build, too little memory/disk, budget too small); 125 the lab did not come up.
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=config.sh
. "$HERE/lib/config.sh"

BUDGET=2400; IDLE_WAIT=150; DAEMON=""; RESULTS=""; SCEN="basic,netfront-sim,hostile,multiqueue,restart,attach-detach,destroy,vifname,guest-lifecycle,reboot-save,rx-stall,driver-domain,compare"; EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) BUDGET=$2; shift 2 ;;
    --idle-wait) IDLE_WAIT=$2; shift 2 ;;
    --unetbackd) DAEMON=$2; shift 2 ;;
    --results) RESULTS=$2; shift 2 ;;
    --scenarios) SCEN=$2; shift 2 ;;
    lab.*=*) EXTRA+=("$1"); shift ;;
    *) die "xen-lab ci: unknown argument $1" ;;
  esac
done
[ -n "$DAEMON" ] || DAEMON=$REPO/build/release/bin/unetbackd
[ -n "$RESULTS" ] || RESULTS=$LAB/ci-results
T0=$SECONDS
skip() { log "lab tier SKIPPED: $*"; echo "LAB-CI skipped reason=\"$*\""; exit 77; }

# ---- can this machine run the lab? (every "no" is a skip with its reason)
[ "$(id -u)" = 0 ] || skip "not root (debootstrap, chroot and the image build need root)"
[ -x "$DAEMON" ] || skip "no unetbackd at $DAEMON (build it first)"
# (grep reads all of its input: with pipefail, `grep -q` leaving early fails the
# pipe with SIGPIPE's 141 when the writer is still writing, as apt-cache is.)
for p in qemu-system-x86 debootstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "ok installed" >/dev/null && continue
  apt-cache policy "$p" 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null ||
    skip "$p is neither installed nor installable with apt-get"
done
mem_mb=$(awk '/^MemAvailable:/{print int($2 / 1024)}' /proc/meminfo)
[ "${mem_mb:-0}" -ge $((QEMU_MEM + 512)) ] || skip "${mem_mb} MiB of memory available, QEMU needs $((QEMU_MEM + 512))"
mkdir -p "$LAB"
disk_mb=$(df -Pm "$LAB" | awk 'NR == 2 {print $4}')
cached=0
[ -f "$LAB/dom0-base.cpio" ] && [ -f "$LAB/boot/xen.elf" ] && cached=1
need_disk=1500; [ $cached = 0 ] && need_disk=3000
[ "${disk_mb:-0}" -ge $need_disk ] || skip "${disk_mb} MiB free under $LAB, need $need_disk"
# Estimates (2-core host, TCG, measured in docs/lab.md): image build from scratch 2-5
# min, one boot with the six daemon scenarios 14-23 min on a loaded host; netfront-sim and
# hostile (three guest boots, nine attacks on unetbackd; the kernel netback's half runs
# on demand: xen-lab run hostile) add about 4-8 min, driver-domain (two guests in a
# driver domain) about 2.
est=$((26 * 60)); [ $cached = 0 ] && est=$((est + 5 * 60))
[ "$BUDGET" -ge "$est" ] || skip "budget ${BUDGET}s is below the estimate ${est}s (images cached: $cached)"

# ---- host packages and images (timed)
"$HERE/xen-lab" deps || skip "could not install the host packages ($HOST_PKGS)"
tb=$SECONDS
if ! flock "$LAB/.lock" "$HERE/lib/build.sh"; then
  [ $cached = 0 ] && skip "the first image build failed (no Debian mirror reachable?)"
  die "image build failed"
fi
build_s=$((SECONDS - tb))
log "images ready in ${build_s}s (cached before: $cached)"

# ---- the steering program on the dom0's kernel (its BPF verifier), booted bare
steering_tests=$(dirname "$DAEMON")/unetback_steering_tests
steering_rc=77; mkdir -p "$RESULTS"
if [ -x "$steering_tests" ]; then
  "$HERE/xen-lab" kernel-test "$steering_tests" --gtest_brief=1 --gtest_color=no >"$RESULTS/steering-kernel.log" 2>&1
  steering_rc=$?
  cat "$RESULTS/steering-kernel.log"
fi

# ---- the TCG mode: right after the gate's builds the host may still be busy, and
# xen-lab's auto mode would pick single-threaded TCG for the whole boot. Wait (bounded)
# for it to go idle (host_idle: under half a core busy over 5 s), so an otherwise idle
# machine gets multi-threaded TCG (guests boot in 12-15 s, not 19-26 s). A machine
# that stays busy keeps single, which a busy host needs (docs/lab.md).
if [ "${UNETBACK_LAB_TCG:-auto}" = auto ] && [ "$(nproc)" -lt 4 ]; then
  waited=0
  until host_idle || [ $waited -ge "$IDLE_WAIT" ]; do waited=$((waited + 5)); done
  log "host busy $(host_busy_cores 2) cores after waiting ${waited}s for an idle host"
fi

# ---- one boot, every scenario; QEMU killed at whatever budget is left
left=$((BUDGET - (SECONDS - T0)))
[ $left -ge 300 ] || skip "only ${left}s of the budget left after the image build"
per=$((left * 2 / 3)); [ $per -gt 900 ] && per=900
tr=$SECONDS
for attempt in 1 2; do
  # (a TERM to this script reaches the run, whose traps take QEMU down with it)
  setpriv --pdeathsig TERM -- "$HERE/xen-lab" run --unetbackd "$DAEMON" --timeout "$left" \
    --results "$RESULTS" "$SCEN" "lab.scenario_timeout=$per" lab.compare_rounds=1 \
    lab.secs=4 lab.rr_secs=3 lab.hostile_backends=unetbackd "${EXTRA[@]}"
  rc=$?
  left=$((BUDGET - (SECONDS - T0)))
  # 125: the lab itself did not come up (a starved host can stall dom0: soft lockups);
  # one more boot if the budget still allows it
  { [ $rc = 125 ] && [ $attempt = 1 ] && [ $left -ge $((est - 5 * 60)) ]; } || break
  log "the lab did not come up: booting once more"
done
boot_s=$((SECONDS - tr))

# ---- summary: one line per scenario, then the timings
{
  printf '%-16s %-6s %s\n' SCENARIO RESULT SECS
  for s in ${SCEN//,/ }; do
    r=$(cat "$RESULTS/$s.rc" 2>/dev/null || echo 124)
    secs=$(sed -n 's/^LAB-SCENARIO name=[^ ]* rc=[0-9]* secs=\([0-9]*\).*/\1/p' "$RESULTS/$s.log" 2>/dev/null | tail -1)
    case "$r" in 0) w=pass ;; 77) w=skip ;; 124) w=TIMEOUT ;; *) w="FAIL($r)" ;; esac
    printf '%-16s %-6s %s\n' "$s" "$w" "${secs:--}"
  done
  case "$steering_rc" in 0) w=pass ;; 77) w=skip ;; *) w="FAIL($steering_rc)" ;; esac
  printf '%-16s %-6s %s\n' "steering-$(kver)" "$w" "(bare dom0 kernel)"
  echo "image build ${build_s}s (cached before: $cached), boot+scenarios ${boot_s}s, lab tier total $((SECONDS - T0))s"
} | tee "$RESULTS/summary.txt"
[ "$rc" = 125 ] && exit 125   # the lab did not come up (the console tail is above)
failed=0
if [ "$steering_rc" != 0 ] && [ "$steering_rc" != 77 ]; then
  failed=1; log "the steering tests failed on the dom0 kernel ($steering_rc):"; cat "$RESULTS/steering-kernel.log" >&2
fi
for s in ${SCEN//,/ }; do
  r=$(cat "$RESULTS/$s.rc" 2>/dev/null || echo 124)
  if [ "$r" != 0 ] && [ "$r" != 77 ]; then
    failed=1; log "scenario $s failed ($r): its console lines and diagnostics:"; cat "$RESULTS/$s.log" >&2
  fi
done
exit $failed
