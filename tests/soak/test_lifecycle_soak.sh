#!/usr/bin/env bash
# Lifecycle soak (issue #7 item 2): UNETBACK_SOAK_CYCLES (default 30, the CI
# size, about 2 minutes under ASan; e.g. 1000 on demand) attach/detach
# cycles, each with a random queue count (1..4) and some traffic (pings),
# alternating `xl network-attach/-detach` on a long-lived domain with a whole
# `xl domain-create/-destroy` of another. A bystander guest stays connected
# throughout and must still pass traffic at the end. After a warm-up of
# UNETBACK_SOAK_WARMUP cycles (default 10: ASan's quarantine, capped at
# 16 MiB below, fills during the first ones) the daemon's resources are
# recorded; at the end (same vif population) it must hold exactly as many
# fds, threads, guest memory mappings, TAPs and XenStore watches, and its RSS
# may have grown by at most UNETBACK_SOAK_RSS_SLACK_KB (default 8192 KiB).
# Prints machine-readable "RESULT soak_..." lines.
source "$(dirname "$0")/../integration/lib.sh"
CYCLES=${UNETBACK_SOAK_CYCLES:-30}
WARMUP=${UNETBACK_SOAK_WARMUP:-10}
RSS_SLACK_KB=${UNETBACK_SOAK_RSS_SLACK_KB:-8192}
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
((CYCLES > WARMUP)) || fail "UNETBACK_SOAK_CYCLES must be > $WARMUP"
start_xenstored
start_host_ns
start_daemon
start_guest 9 2  # the bystander: connected for the whole run

ping_ok() { ip netns exec "$(guest_ns "$1")" ping -c "${2:-2}" -i 0.2 -W 2 "$HOST_IP" >/dev/null; }

# One cycle: attach with Q queues, traffic, detach; both ends gone afterwards.
cycle() {
  local n=$1 queues=$((RANDOM % 4 + 1)) domid old
  if ((n % 2)); then
    domid=1
    ((n > 1)) || { add_guest_ns 1; xl domain-create 1; }
    attach_guest 1 "$queues"
  else
    domid=2
    start_guest 2 "$queues"
  fi
  ping_ok "$domid" 3 || fail "cycle $n: no traffic on guest $domid ($queues queues)"
  old=$(netfront_pid "$domid")
  if ((n % 2)); then
    xl network-detach 1 0 || fail "cycle $n: detach did not reach Closed"
  else
    xl domain-destroy 2 || fail "cycle $n: domain-destroy failed"
  fi
  wait_for 10 "cycle $n: guest $domid netfront gone" bash -c "! kill -0 $old 2>/dev/null"
  forget_pid "$old"
  wait_for 10 "cycle $n: vif$domid.0 released" \
    bash -c "! ip -n $HOST_NS link show vif$domid.0 >/dev/null 2>&1"
  if ((n % 2 == 0)); then
    ip netns del "$(guest_ns 2)"
    unset 'GUEST_NS[-1]'
  fi
  echo "RESULT soak_cycle n=$n guest=$domid queues=$queues"
}

start=$SECONDS
for ((n = 1; n <= WARMUP; n++)); do cycle "$n"; done
baseline=$(daemon_resources)
echo "RESULT soak_baseline after_cycles=$WARMUP $baseline"
t0=$SECONDS
for ((n = WARMUP + 1; n <= CYCLES; n++)); do
  cycle "$n"
  ((n % 10)) || log "cycle $n: $(daemon_resources)"
done
measured=$((CYCLES - WARMUP))
ping_ok 9 3 || fail "the bystander guest lost traffic"
assert_no_leaks "$baseline" "after $CYCLES cycles"
final=$(daemon_resources)
growth=$(($(resource_value "$final" rss_kb) - $(resource_value "$baseline" rss_kb)))
echo "RESULT soak_final cycles=$CYCLES $final rss_growth_kb=$growth rss_bound_kb=$RSS_SLACK_KB" \
  "seconds=$((SECONDS - start)) seconds_per_cycle=$(awk -v s=$((SECONDS - t0)) -v c=$measured 'BEGIN { printf "%.2f", s / c }')"
((growth <= RSS_SLACK_KB)) || fail "RSS grew by $growth KiB over $measured cycles (bound $RSS_SLACK_KB)"
kill -0 "$(daemon_pid)" || fail "unetbackd died"
log "PASS"
