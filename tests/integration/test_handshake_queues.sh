#!/usr/bin/env bash
# Handshake with 1, 2, 4 and 8 queues, shared and split event channels: the
# backend and frontend reach Connected, the frontend's keys match the queue
# count, and ping crosses every configuration.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon --max-queues 8

domid=1
for queues in 1 2 4 8; do
  for split in "" --split-event-channels; do
    start_guest "$domid" "$queues" $split
    fe="/local/domain/$domid/device/vif/0"
    be="/local/domain/0/backend/vif/$domid/0"
    [[ "$(xenstore-read "$be/multi-queue-max-queues")" == 8 ]] || fail "max-queues not advertised"
    if ((queues == 1)); then
      xenstore-read "$fe/tx-ring-ref" >/dev/null || fail "flat tx-ring-ref missing for 1 queue"
    else
      [[ "$(xenstore-read "$fe/multi-queue-num-queues")" == "$queues" ]] || fail "num-queues"
      xenstore-read "$fe/queue-$((queues - 1))/rx-ring-ref" >/dev/null || fail "queue dir missing"
    fi
    if [[ -n "$split" ]]; then
      key=$([[ $queues == 1 ]] && echo "$fe/event-channel-tx" || echo "$fe/queue-0/event-channel-tx")
      xenstore-read "$key" >/dev/null || fail "split event channels not used"
    fi
    ip netns exec "$(guest_ns "$domid")" ping -c 3 -i 0.2 -W 2 "$HOST_IP" >/dev/null ||
      fail "ping failed with $queues queues ${split:-shared}"
    log "ok: $queues queues ${split:-shared event channel}"
    xl network-detach "$domid" 0 || fail "detach did not reach Closed"
    domid=$((domid + 1))
  done
done
log "PASS"
