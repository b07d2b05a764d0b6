#!/usr/bin/env bash
# systemd-analyze verify accepts the unit without a single warning (unknown keys are
# only warnings, so the output must be empty). ExecStart must name an existing
# executable: the copy checked points it at BINARY (the built daemon, or /bin/true).
#   check_unit_file.sh UNIT_FILE BINARY
source "$(dirname "$0")/lib.sh"
unit=$1
binary=$2
command -v systemd-analyze >/dev/null || { echo "systemd-analyze missing"; exit 77; }
sed "s#^ExecStart=/usr/sbin/unetbackd#ExecStart=$binary#" "$unit" >"$WORK/unetbackd.service"
out=$(systemd-analyze verify --man=no "$WORK/unetbackd.service" 2>&1) || true
check "systemd-analyze verify prints nothing" test -z "$out"
[[ -z "$out" ]] || echo "$out" >&2
finish
