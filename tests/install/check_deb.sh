#!/usr/bin/env bash
# Checks what tests/install/build_debs.sh built into DEBS_DIR: lintian finds no
# error or warning in the source and binary packages; unetback's control data
# (Depends from dpkg-shlibdeps plus the hotplug script's tools, Recommends,
# conffiles, maintainer scripts: the unit enabled, not started) and contents, with
# no simulation tool, which unetback-sim has; then asks apt whether
# `apt install ./unetback_*.deb` would succeed on this Debian (a simulation).
#   check_deb.sh DEBS_DIR --program unetbackd --program unetbackctl
source "$(dirname "$0")/lib.sh"
debs_dir=$1
shift
parse_programs "$@"

# only_file PATTERN: the one file DEBS_DIR has matching PATTERN, or exit 1.
only_file() {
  # shellcheck disable=SC2206  # $1 is a glob pattern: expanded on purpose
  local matches=("$debs_dir"/$1)
  [[ ${#matches[@]} -eq 1 && -f "${matches[0]}" ]] ||
    { echo "FAIL expected one $debs_dir/$1 (install.deb_build makes it)" >&2; exit 1; }
  echo "${matches[0]}"
}
deb=$(only_file 'unetback_*.deb')
sim_deb=$(only_file 'unetback-sim_*.deb')
changes=$(only_file 'unetback_*.changes')
echo "checking $(basename "$deb"), $(basename "$sim_deb"), $(basename "$changes")"

# ---- lintian: the .changes names the .dsc, the .debs and the .ddebs ----
command -v lintian >/dev/null || { echo "FAIL lintian missing (tools/deps installs it)" >&2; exit 1; }
if lintian --fail-on error,warning --display-info "$changes" >"$WORK/lintian.log" 2>&1; then
  echo "ok   lintian --fail-on error,warning: no error, no warning"
else
  echo "FAIL lintian --fail-on error,warning" >&2
  FAILURES=$((FAILURES + 1))
fi
sed 's/^/     /' "$WORK/lintian.log"

# ---- unetback: control data ----
dpkg-deb -f "$deb" | sed 's/^/  /'
field() { dpkg-deb -f "$deb" "$1"; }
check "Package: unetback" test "$(field Package)" = unetback
check "Architecture: $(dpkg --print-architecture)" \
  test "$(field Architecture)" = "$(dpkg --print-architecture)"
depends=$(field Depends)
# names_package FIELD NAME: NAME is one of FIELD's comma-separated entries (version ignored).
names_package() { tr ',' '\n' <<<"$1" | sed 's/^ *//; s/ .*//' | grep -qxF "$2"; }
depends_on() { names_package "$depends" "$1"; }
for dep in libc6 libstdc++6 libxenstore4 libxengnttab1 libxenevtchn1 libsystemd0 libcap-ng0 \
  libseccomp2 xenstore-utils iproute2 adduser; do
  check "Depends names $dep" depends_on "$dep"
done
check "Recommends: xen-utils-4.17" test "$(field Recommends)" = xen-utils-4.17
check "Section: net" test "$(field Section)" = net

mkdir -p "$WORK/control"
dpkg-deb -e "$deb" "$WORK/control"
check "conffile /etc/unetback/unetback.toml" grep -qx /etc/unetback/unetback.toml \
  "$WORK/control/conffiles"
check "conffile /etc/xen/scripts/vif-bridge-unetback" \
  grep -qx /etc/xen/scripts/vif-bridge-unetback "$WORK/control/conffiles"
for s in postinst prerm postrm; do
  check "maintainer script $s is executable" test -x "$WORK/control/$s"
  check "maintainer script $s parses" sh -n "$WORK/control/$s"
done
# The unit's lifecycle (debian/rules): enabled on install, never started or
# restarted by dpkg, stopped on removal, its state forgotten on purge.
check "postinst enables unetbackd.service" \
  grep -qE 'deb-systemd-helper enable .?unetbackd\.service' "$WORK/control/postinst"
no_start() { ! grep -qE 'deb-systemd-invoke (start|restart|try-restart)' "$WORK/control/postinst"; }
check "postinst neither starts nor restarts the unit" no_start
check "prerm stops unetbackd.service on remove" \
  grep -qE 'deb-systemd-invoke stop .?unetbackd\.service' "$WORK/control/prerm"
check "postinst creates the daemon's user before the tmpfiles snippet" \
  awk '/adduser --system/ && !u {u = NR} /systemd-tmpfiles/ && !t {t = NR} END {exit !(u && t && u < t)}' \
    "$WORK/control/postinst"
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./lib/systemd/system/unetbackd.service >"$WORK/unit"
check "the unit runs the daemon as user unetback" grep -qE '^ExecStart=.* --user unetback' "$WORK/unit"
check "postrm purges the unit's state" \
  grep -qE 'deb-systemd-helper purge .?unetbackd\.service' "$WORK/control/postrm"

# ---- unetback: contents ----
contents=$(dpkg-deb -c "$deb")
# lists TEXT MODE PATH: the `dpkg-deb -c` listing TEXT has PATH, root-owned, with MODE.
lists() { grep -qE "^$2 +root/root .* \./$3$" <<<"$1"; }
has() { lists "$contents" "$@"; }
for p in "${PROGRAMS[@]}"; do
  check "contains /usr/sbin/$p (rwxr-xr-x root)" has '-rwxr-xr-x' "usr/sbin/$p"
done
check "contains the unit" has '-rw-r--r--' lib/systemd/system/unetbackd.service
check "contains the modprobe blacklist" has '-rw-r--r--' lib/modprobe.d/unetback.conf
check "contains the udev rule for the Xen devices" has '-rw-r--r--' lib/udev/rules.d/60-unetback.rules
check "contains the tmpfiles.d entry for /run/unetback" has '-rw-r--r--' usr/lib/tmpfiles.d/unetback.conf
check "contains the modules-load.d file" has '-rw-r--r--' lib/modules-load.d/unetback.conf
check "contains /etc/unetback/unetback.toml" has '-rw-r--r--' etc/unetback/unetback.toml
check "contains the hotplug script" has '-rwxr-xr-x' etc/xen/scripts/vif-bridge-unetback
for page in man8/unetbackd.8 man8/unetbackctl.8 man5/unetback.toml.5; do
  check "contains $page.gz" has '-rw-r--r--' "usr/share/man/$page.gz"
done
# The unit and the man pages name these by their uncompressed paths.
for doc in operator-guide.md xl.md unetback.toml.example unetback.rules.yml copyright changelog.gz; do
  check "contains /usr/share/doc/unetback/$doc" has '-rw-r--r--' "usr/share/doc/unetback/$doc"
done
sim_tools='/(sim-xl|netfront-sim|sim-xenstored)$'
no_sim_tools() { ! grep -qE "$sim_tools" <<<"$contents"; }
check "no simulation tools" no_sim_tools

# ---- unetback-sim: the simulation tools ----
sim_contents=$(dpkg-deb -c "$sim_deb")
for p in sim-xl netfront-sim sim-xenstored; do
  check "unetback-sim contains /usr/bin/$p (rwxr-xr-x root)" \
    lists "$sim_contents" '-rwxr-xr-x' "usr/bin/$p"
  check "unetback-sim contains $p.1.gz" lists "$sim_contents" '-rw-r--r--' \
    "usr/share/man/man1/$p.1.gz"
done
check "unetback-sim contains /usr/share/doc/unetback-sim/sim-platform.md" \
  lists "$sim_contents" '-rw-r--r--' usr/share/doc/unetback-sim/sim-platform.md
check "unetback-sim depends on unetback (its daemon and hotplug script)" \
  names_package "$(dpkg-deb -f "$sim_deb" Depends)" unetback
dpkg-deb -x "$sim_deb" "$WORK/sim"
check "sim-xl runs the installed hotplug script by default, not a build path" \
  grep -qaF /etc/xen/scripts/vif-bridge-unetback "$WORK/sim/usr/bin/sim-xl"

if [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null; then
  if apt-get install -s "$deb" >"$WORK/apt.log" 2>&1; then
    echo "ok   apt-get install -s ./$(basename "$deb")"
  else
    cat "$WORK/apt.log" >&2
    echo "FAIL apt-get install -s ./$(basename "$deb")" >&2
    FAILURES=$((FAILURES + 1))
  fi
fi
finish
