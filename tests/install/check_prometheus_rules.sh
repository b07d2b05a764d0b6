#!/usr/bin/env bash
# The shipped alert rules (tools/prometheus/unetback.rules.yml) load in
# Prometheus, and each alert fires on the series it is about and only then
# (tests/install/prometheus_rules_test.yml).
#   check_prometheus_rules.sh SOURCE_DIR
source "$(dirname "$0")/lib.sh"
src=$1
command -v promtool >/dev/null || { echo "promtool missing (package prometheus)"; exit 77; }
check "unetback.rules.yml loads (promtool check rules)" \
  promtool check rules "$src/tools/prometheus/unetback.rules.yml"
check "every alert fires as tested (promtool test rules)" \
  promtool test rules "$src/tests/install/prometheus_rules_test.yml"
# A failing check says why.
((FAILURES == 0)) || promtool test rules "$src/tests/install/prometheus_rules_test.yml" >&2 || true
finish
