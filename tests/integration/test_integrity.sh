#!/usr/bin/env bash
# Payload integrity end to end: 32 MiB of random bytes each way over TCP, with
# GSO on (default) and off, sha256 compared.
source "$(dirname "$0")/lib.sh"
start_xenstored
start_host_ns
start_daemon
head -c $((32 * 1024 * 1024)) /dev/urandom >"$WORLD/payload"
want=$(sha256sum <"$WORLD/payload" | cut -d' ' -f1)

transfer() {  # transfer DOMID DIRECTION
  local domid=$1 dir=$2 ns got
  ns=$(guest_ns "$domid")
  if [[ $dir == up ]]; then
    ip netns exec "$HOST_NS" socat -u TCP-LISTEN:5201,reuseaddr,bind="$HOST_IP" \
      "OPEN:$WORLD/got,creat,trunc" &
    sleep 0.3
    ip netns exec "$ns" socat -u "OPEN:$WORLD/payload" "TCP:$HOST_IP:5201" ||
      fail "guest->host transfer failed"
  else
    ip netns exec "$ns" socat -u TCP-LISTEN:5201,reuseaddr,bind="$(guest_ip "$domid")" \
      "OPEN:$WORLD/got,creat,trunc" &
    sleep 0.3
    ip netns exec "$HOST_NS" socat -u "OPEN:$WORLD/payload" "TCP:$(guest_ip "$domid"):5201" ||
      fail "host->guest transfer failed"
  fi
  wait $!
  got=$(sha256sum <"$WORLD/got" | cut -d' ' -f1)
  [[ "$got" == "$want" ]] || fail "payload corrupted ($dir, guest $domid): $got != $want"
  log "ok: 32 MiB $dir intact (guest $domid)"
}

start_guest 1 2
transfer 1 up
transfer 1 down
start_guest 2 2 --no-gso
transfer 2 up
transfer 2 down
log "PASS"
