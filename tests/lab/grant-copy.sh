#!/bin/bash
# What one grant-copy segment costs in dom0: gntdev's copy ioctl (the daemon's path) against GNTTABOP_copy through privcmd on self-granted pages; no guest.
# knobs: lab.rounds=N (batches per configuration, default 2000)
# Lines: copy path=gntdev|hypercall sides=... len=B batch=N ... wall_ns_per_segment=...
# (tools/grant-copy-probe; docs/performance.md "What a grant copy costs")
# shellcheck source=../../tools/xen-lab/dom0/lab-lib.sh
. /lab/lab-lib.sh
command -v unetback-grant-copy-probe >/dev/null || fail "unetback-grant-copy-probe was not staged (build it beside unetbackd)"
modprobe xen-gntalloc || fail "modprobe xen-gntalloc"
modprobe xen-gntdev 2>/dev/null
out=$(unetback-grant-copy-probe --domid 0 --rounds "${LAB_ROUNDS:-2000}" 2>&1) || check_fail "probe: $out"
while read -r line; do
  case "$line" in
    path=*) result "copy $line"
            case "$line" in *" failed_segments=0 wrong_bytes=0 "*) ;; *) check_fail "copy went wrong: $line" ;; esac ;;
    *) echo "  $line" >&3 ;;
  esac
done <<<"$out"
finish
