#!/usr/bin/env bash
# The man pages render without groff warnings (-ww) and document what they must.
#   check_man_pages.sh DOCS_MAN_DIR
source "$(dirname "$0")/lib.sh"
dir=$1
command -v groff >/dev/null || { echo "groff missing (package groff-base)"; exit 77; }
for page in unetbackd.8 unetbackctl.8 unetback.toml.5 sim-xl.1 sim-xenstored.1 netfront-sim.1; do
  warnings=$(LC_ALL=C.UTF-8 groff -man -ww -z "$dir/$page" 2>&1)
  check "$page renders without warnings" test -z "$warnings"
  [[ -z "$warnings" ]] || echo "$warnings" >&2
  for section in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
    check "$page has $section" grep -q "^\.SH \"\?$section\"\?$" "$dir/$page"
  done
done
for section in OPTIONS SIGNALS FILES "EXIT STATUS"; do
  check "unetbackd.8 has $section" grep -q "^\.SH \"\?$section\"\?$" "$dir/unetbackd.8"
done
for flag in config platform log-level log-target control-socket metrics-listen max-queues; do
  check "unetbackd.8 documents --$flag" grep -qF -- "\\-\\-${flag//-/\\-}" "$dir/unetbackd.8"
done
for cmd in list stats dump disable enable log-level kick hash metrics; do
  check "unetbackctl.8 documents $cmd" grep -qE "^\.B ${cmd//-/\\\\-}( |$)" "$dir/unetbackctl.8"
done
finish
