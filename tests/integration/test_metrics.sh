#!/usr/bin/env bash
# Prometheus metrics, kick and hash against a running unetbackd with a 2-queue
# guest that configured Toeplitz hashing over its control ring:
#   * `unetbackctl metrics` and GET /metrics on metrics-listen pass
#     `promtool check metrics`, and their values are the daemon's counters;
#   * a real Prometheus server scraping the endpoint every second sees the
#     counters rise with the guest's traffic (its /api/v1/query);
#   * the listener's answers (404, 405) and a bad metrics-listen at start-up;
#   * `unetbackctl kick` is answered by the queues (kicks) and traffic flows on;
#   * `unetbackctl hash` shows what the guest set.
# Needs promtool and prometheus (Debian package prometheus) and curl (tools/deps).
source "$(dirname "$0")/lib.sh"

for tool in promtool prometheus curl; do
  command -v "$tool" >/dev/null || fail "$tool missing: run tools/deps"
done

# Both listeners are in the host namespace the test creates, so these ports
# are free there whatever runs on the machine.
METRICS_PORT=9477
PROM_PORT=9090
in_host() { ip netns exec "$HOST_NS" "$@"; }
# http GET|POST PATH: the endpoint's reply headers and body (curl -i).
http() { in_host curl -sS -i -X "$1" --max-time 5 "http://127.0.0.1:$METRICS_PORT$2"; }
# total COUNTER: the daemon's counter summed over vif1.0's queues.
total() { ctl stats vif1.0 --json | jq -r "[.[0].queues[].counters.$1] | add"; }
# exposed TEXT FAMILY: the family's samples for vif1.0 in TEXT, summed.
exposed() {
  awk -v f="$2" '$1 ~ "^"f"\\{" && $1 ~ /vif="vif1\.0"/ { n += $2 } END { print n + 0 }' <<<"$1"
}
guest_pings() { ip netns exec "$(guest_ns 1)" ping -c "$1" -i 0.01 -W 2 "$HOST_IP" >/dev/null; }

start_xenstored
start_host_ns

# --- A bad metrics-listen is refused at start-up, before anything is opened.
RC=0
"$UNETBACK_BIN/unetbackd" --platform sim --metrics-listen localhost:9477 \
  >"$WORLD/out" 2>"$WORLD/err" || RC=$?
{ ((RC == 2)) && grep -q -- "--metrics-listen.*ADDRESS:PORT" "$WORLD/err"; } ||
  fail "--metrics-listen localhost:9477: exit $RC, $(cat "$WORLD/err")"
log "ok: bad --metrics-listen -> exit 2: $(head -n 1 "$WORLD/err")"

start_daemon --max-queues 2 --metrics-listen "127.0.0.1:$METRICS_PORT"
start_guest 1 2 --ctrl-ring --hash-mapping 1,0
guest_pings 20 || fail "ping from the guest"

# --- unetbackctl metrics: valid exposition text, values from the counters.
before=$(total tx_packets)
text=$(ctl metrics) || fail "unetbackctl metrics failed"
after=$(total tx_packets)
promtool check metrics <<<"$text" >"$WORLD/lint" 2>&1 || fail "promtool: $(cat "$WORLD/lint")"
log "ok: unetbackctl metrics passes promtool check metrics ($(wc -l <<<"$text") lines)"
shown=$(exposed "$text" unetback_queue_tx_packets_total)
((before <= shown && shown <= after && shown >= 20)) ||
  fail "metrics tx_packets $shown, stats before $before after $after"
grep -q '^unetback_vif_state{vif="vif1.0",domid="1",devid="0",state="Connected"} 1$' <<<"$text" ||
  fail "vif1.0 not Connected in the metrics"
grep -q '^unetback_vif_disabled{vif="vif1.0",domid="1",devid="0"} 0$' <<<"$text" ||
  fail "vif1.0 disabled in the metrics"
grep -q '^unetback_vif_queues{vif="vif1.0",domid="1",devid="0"} 2$' <<<"$text" ||
  fail "vif1.0 queue count"
grep -q '^unetback_build_info{version="[0-9][^"]*"} 1$' <<<"$text" || fail "no build info"
grep -q '^unetback_queue_tx_drops_total{vif="vif1.0",domid="1",devid="0",queue="0",reason="runt"} ' \
  <<<"$text" || fail "no tx drops by reason"

# --- GET /metrics: the same families, the exposition content type; 404, 405.
reply=$(http GET /metrics) || fail "GET /metrics failed"
head -n 1 <<<"$reply" | grep -q '^HTTP/1.1 200 ' || fail "GET /metrics: $(head -n 1 <<<"$reply")"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' <<<"$reply" ||
  fail "GET /metrics content type: $reply"
body=$(sed '1,/^\r$/d' <<<"$reply")
promtool check metrics <<<"$body" >"$WORLD/lint" 2>&1 || fail "promtool (HTTP): $(cat "$WORLD/lint")"
[[ $(grep -c '^# TYPE' <<<"$body") == $(grep -c '^# TYPE' <<<"$text") ]] ||
  fail "HTTP and unetbackctl metrics differ in families"
log "ok: GET /metrics passes promtool check metrics"
http GET /nothing | head -n 1 | grep -q '^HTTP/1.1 404 ' || fail "GET /nothing is not 404"
http POST /metrics | head -n 1 | grep -q '^HTTP/1.1 405 ' || fail "POST /metrics is not 405"

# --- A real Prometheus scraping the endpoint every second.
mkdir -p "$WORLD/tsdb"
cat >"$WORLD/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: unetback
    static_configs:
      - targets: ["127.0.0.1:$METRICS_PORT"]
EOF
start_bg prometheus ip netns exec "$HOST_NS" prometheus --config.file="$WORLD/prometheus.yml" \
  --storage.tsdb.path="$WORLD/tsdb" --web.listen-address="127.0.0.1:$PROM_PORT"
# promql EXPR: the value of a one-element instant vector ("" when empty).
promql() {
  in_host curl -sS --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" \
    --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'
}
scraped_at_least() { [[ -n "$(promql "$1")" ]] && (($(promql "$1") >= $2)); }
wait_for 60 "Prometheus scraping unetbackd" scraped_at_least 'up{job="unetback"}' 1
tx='sum(unetback_queue_tx_packets_total{vif="vif1.0"})'
wait_for 10 "a scrape of tx_packets" scraped_at_least "$tx" 1
first=$(promql "$tx")
guest_pings 50 || fail "ping from the guest"
daemon_now=$(total tx_packets)
((daemon_now >= first + 50)) || fail "daemon tx_packets $daemon_now after 50 pings, was $first"
wait_for 15 "Prometheus to see tx_packets >= $daemon_now" scraped_at_least "$tx" "$daemon_now"
seen=$(promql "$tx")
((seen <= $(total tx_packets))) || fail "Prometheus saw $seen, ahead of the daemon"
log "ok: Prometheus: tx_packets $first -> $seen (daemon $daemon_now after 50 pings)"
# A metrics-listen address already taken (Prometheus's): a second daemon
# says so and exits 1 before it serves anything.
RC=0
in_host "$UNETBACK_BIN/unetbackd" --platform sim --sim-dir "$SIM_DIR" --xenstore "$XS_DIR/socket" \
  --control-socket "$WORLD/ctl2.sock" --state-dir "$WORLD/state2" \
  --metrics-listen "127.0.0.1:$PROM_PORT" >"$WORLD/out" 2>"$WORLD/err" || RC=$?
{ ((RC == 1)) && grep -q "metrics-listen 127.0.0.1 port $PROM_PORT: Address already in use$" "$WORLD/err"; } ||
  fail "second daemon on a taken metrics-listen: exit $RC, $(cat "$WORLD/err")"
log "ok: taken metrics-listen -> exit 1: $(grep -o 'metrics-listen.*' "$WORLD/err")"
rx='sum(unetback_queue_rx_packets_total{vif="vif1.0"})'
rx_daemon=$(total rx_packets)
wait_for 15 "Prometheus to see rx_packets >= $rx_daemon" scraped_at_least "$rx" "$rx_daemon"
disabled='unetback_vif_disabled{vif="vif1.0"}'
[[ $(promql "$disabled") == 0 ]] || fail "Prometheus: vif1.0 disabled"

# --- kick: every queue answers, the counter moves, traffic flows on.
declare -A kicks
for q in 0 1; do kicks[$q]=$(queue_counter vif1.0 "$q" kicks); done
out=$(ctl kick vif1.0) || fail "unetbackctl kick vif1.0"
[[ $out == "kicked vif1.0 queues 0 1" ]] || fail "kick printed: $out"
kicked() { (($(queue_counter vif1.0 "$1" kicks) >= $2)); }
for q in 0 1; do wait_for 5 "queue $q to answer the kick" kicked "$q" $((kicks[$q] + 1)); done
out=$(ctl kick vif1.0 1) || fail "unetbackctl kick vif1.0 1"
[[ $out == "kicked vif1.0 queue 1" ]] || fail "kick vif1.0 1 printed: $out"
wait_for 5 "queue 1 to answer the second kick" kicked 1 $((kicks[1] + 2))
(($(queue_counter vif1.0 0 kicks) == kicks[0] + 1)) || fail "kick of queue 1 kicked queue 0"
wait_for 15 "Prometheus to see the kicks" scraped_at_least \
  'sum(unetback_queue_kicks_total{vif="vif1.0"})' $((kicks[0] + kicks[1] + 3))
guest_pings 10 || fail "ping after the kicks"
RC=0
ctl kick vif1.0 7 >"$WORLD/out" 2>"$WORLD/err" || RC=$?
{ ((RC == 1)) && grep -q "no queue 7" "$WORLD/err"; } || fail "kick vif1.0 7: exit $RC $(cat "$WORLD/err")"
RC=0
ctl kick vif9.0 >"$WORLD/out" 2>"$WORLD/err" || RC=$?
{ ((RC == 1)) && grep -q "no vif named 'vif9.0'" "$WORLD/err"; } || fail "kick vif9.0: exit $RC"
log "ok: kick: kicks ${kicks[0]},${kicks[1]} -> $(queue_counter vif1.0 0 kicks),$(queue_counter vif1.0 1 kicks)"

# --- hash: what the guest configured (netfront-sim: Toeplitz, every type,
# Microsoft's verification key, the mapping it was given).
json=$(ctl hash vif1.0 --json) || fail "unetbackctl hash vif1.0 --json"
jq -e '.control_ring and .configured and .algorithm == "toeplitz" and .flags == 15 and
       .types == ["ipv4", "ipv4+tcp", "ipv6", "ipv6+tcp"] and .mapping == [1, 0] and
       .mapping_size == 2 and .num_queues == 2 and
       (.key | startswith("6d5a56da255b0ec24167253d43a38fb0d0ca2bcb"))' <<<"$json" >/dev/null ||
  fail "hash --json: $json"
table=$(ctl hash vif1.0) || fail "unetbackctl hash vif1.0"
{ grep -q '^algorithm: toeplitz$' <<<"$table" && grep -q '^flags: 0xf (ipv4, ipv4+tcp, ipv6, ipv6+tcp)$' \
  <<<"$table" && grep -q '^  6d 5a 56 da' <<<"$table" && grep -q '^mapping: 2 entries over 2 queues' \
  <<<"$table"; } || fail "hash table: $table"
log "unetbackctl hash vif1.0:"$'\n'"$table"
start_guest 2 1
[[ $(ctl hash vif2.0) == "vif2.0: no control ring (none connected, or the vif is not running)" ]] ||
  fail "hash of a vif without a control ring: $(ctl hash vif2.0)"

# --- disable shows in the metrics; the listener keeps serving.
ctl disable vif1.0 >/dev/null || fail "disable vif1.0"
grep -q '^unetback_vif_disabled{vif="vif1.0",domid="1",devid="0"} 1$' <<<"$(ctl metrics)" ||
  fail "metrics do not show vif1.0 disabled"
wait_for 15 "Prometheus to see vif1.0 disabled" scraped_at_least "$disabled" 1
ctl enable vif1.0 >/dev/null || fail "enable vif1.0"
log "PASS"
