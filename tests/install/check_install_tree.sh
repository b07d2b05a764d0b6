#!/usr/bin/env bash
# `cmake --install` into a temporary DESTDIR with prefix /usr, then checks the tree a
# Debian host gets: programs in /usr/sbin, the unit, the modprobe blacklist, the
# configuration and hotplug script under /etc, gzipped man pages, docs; and that no
# simulation tool is installed by default.
#   check_install_tree.sh BUILD_DIR --program unetbackd --program unetbackctl
source "$(dirname "$0")/lib.sh"
build=$1
shift
parse_programs "$@"
root=$WORK/root

DESTDIR=$root cmake --install "$build" --prefix /usr >"$WORK/install.log" 2>&1 ||
  { cat "$WORK/install.log" >&2; echo "FAIL cmake --install" >&2; exit 1; }

for p in "${PROGRAMS[@]}"; do
  check "/usr/sbin/$p is an executable" test -x "$root/usr/sbin/$p"
done
not_installed() { [[ -z "$(find "$root" -name "$1")" ]]; }
for p in sim-xl netfront-sim sim-xenstored; do
  check "simulation tool $p is not installed by default" not_installed "$p"
done

unit=$root/lib/systemd/system/unetbackd.service
check "unit installed" test -f "$unit"
check "unit is Type=notify" grep -qx 'Type=notify' "$unit"
check "unit has a watchdog" grep -qE '^WatchdogSec=[1-9]' "$unit"
check "unit starts /usr/sbin/unetbackd --platform xen" \
  grep -qE '^ExecStart=/usr/sbin/unetbackd --platform xen( |$)' "$unit"
# CAP_BPF: the steering program's load; CAP_SETUID/CAP_SETGID/CAP_SETPCAP: the
# switch to user unetback and the bounding set's shrink, both before any thread starts
check "unit bounds capabilities to CAP_NET_ADMIN, CAP_BPF and the user switch's" \
  grep -qx 'CapabilityBoundingSet=CAP_NET_ADMIN CAP_BPF CAP_SETUID CAP_SETGID CAP_SETPCAP' "$unit"
check "unit runs the daemon as user unetback" \
  grep -qE '^ExecStart=/usr/sbin/unetbackd .*--user unetback( |$)' "$unit"
# @system-service lacks bpf(2) (it is in @privileged): without it the steering program
# cannot load under the unit and the daemon runs without RX steering; seccomp(2) installs
# the daemon's own allow-list
check "unit's system-call filter allows bpf(2) and seccomp(2)" \
  grep -qx 'SystemCallFilter=bpf seccomp' "$unit"
check "unit allows /dev/net/tun" grep -qx 'DeviceAllow=/dev/net/tun rw' "$unit"

modprobe_conf=$root/lib/modprobe.d/unetback.conf
check "modprobe file blacklists xen-netback" grep -qx 'blacklist xen-netback' "$modprobe_conf"
check "modprobe file blocks explicit loads" grep -qx 'install xen-netback /bin/false' \
  "$modprobe_conf"
check "modules-load.d loads tun at boot" grep -qx 'tun' "$root/lib/modules-load.d/unetback.conf"

check "configuration /etc/unetback/unetback.toml" grep -qx '\[daemon\]' \
  "$root/etc/unetback/unetback.toml"
check "hotplug script is executable" test -x "$root/etc/xen/scripts/vif-bridge-unetback"

has_name_section() { gzip -dc "$1" | grep -q '^\.SH NAME'; }
for page in man8/unetbackd.8 man8/unetbackctl.8 man5/unetback.toml.5; do
  gz=$root/usr/share/man/$page.gz
  check "man page $page.gz is gzip" gzip -t "$gz"
  check "man page $page.gz has a NAME section" has_name_section "$gz"
done
for doc in operator-guide.md xl.md unetback.toml.example unetback.rules.yml; do
  check "doc $doc" test -s "$root/usr/share/doc/unetback/$doc"
done
finish
