#!/bin/bash
# netfront_sim_cli_test.sh NETFRONT_SIM: options each platform requires, checked before
# anything is opened (exit 1 with the option named), and a setup failure (exit 2, a
# message, no crash) where the Xen platform's devices are absent.
set -u
bin=$1 failed=0
expect() {   # expect RC PATTERN ARGS...: exit status RC and PATTERN on stderr
  local rc=$1 pattern=$2 got; shift 2
  got=$(env -u XENSTORED_PATH "$bin" "$@" 2>&1 >/dev/null); local status=$?
  if [ $status != "$rc" ] || ! grep -q -- "$pattern" <<<"$got"; then
    echo "FAIL: netfront-sim $*: exit $status (want $rc), stderr: $got"; failed=1
  fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
expect 1 "--domid is required with --platform sim" --platform sim
expect 1 "--xenstore-dir is required with --platform sim" --domid 3
expect 1 "--netns is required with --platform sim" --domid 3 --xenstore-dir "$tmp"
expect 1 "bogus not in" --platform bogus
expect 1 "one of: linux, xenvif, gplpv, minios" --personality windows
expect 1 "tx-slot-bytes" --tx-slot-bytes 100
if [ ! -e /dev/xen/xenbus ] && [ ! -S /run/xenstored/socket ] && [ ! -S /var/run/xenstored/socket ]; then
  expect 2 "setup failed: xenstore open" --platform xen
fi
[ $failed = 0 ] && echo "netfront-sim command line: ok"
exit $failed
