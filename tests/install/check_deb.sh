#!/usr/bin/env bash
# Builds the .deb with cpack from BUILD_DIR and checks its control data (Depends from
# dpkg-shlibdeps plus the hotplug script's tools, Recommends, conffiles, maintainer
# scripts) and its contents; then asks apt whether `apt install ./unetback_*.deb`
# would succeed on this Debian (a simulation: nothing is installed).
#   check_deb.sh BUILD_DIR --program unetbackd --program unetbackctl
source "$(dirname "$0")/lib.sh"
build=$1
shift
parse_programs "$@"

[[ -f "$build/CPackConfig.cmake" ]] ||
  { echo "FAIL no $build/CPackConfig.cmake: is cmake/packaging.cmake included?" >&2; exit 1; }
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1 ||
  { cat "$WORK/cpack.log" >&2; echo "FAIL cpack -G DEB" >&2; exit 1; }
debs=("$WORK"/pkg/unetback_*.deb)
[[ -f "${debs[0]}" ]] || { echo "FAIL cpack made no unetback_*.deb" >&2; exit 1; }
deb=${debs[0]}
echo "built $(basename "$deb")"

dpkg-deb -f "$deb" | sed 's/^/  /'
field() { dpkg-deb -f "$deb" "$1"; }
check "Package: unetback" test "$(field Package)" = unetback
check "Architecture: $(dpkg --print-architecture)" \
  test "$(field Architecture)" = "$(dpkg --print-architecture)"
depends=$(field Depends)
# depends_on NAME: NAME is one of the comma-separated entries (version ignored).
depends_on() { tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/ .*//' | grep -qxF "$1"; }
for dep in libc6 libstdc++6 libxenstore4 libxengnttab1 libxenevtchn1 libsystemd0 libcap-ng0 \
  xenstore-utils iproute2; do
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

contents=$(dpkg-deb -c "$deb")
has() { grep -qE "^$1 +root/root .* \./$2$" <<<"$contents"; }
for p in "${PROGRAMS[@]}"; do
  check "contains /usr/sbin/$p (rwxr-xr-x root)" has '-rwxr-xr-x' "usr/sbin/$p"
done
check "contains the unit" has '-rw-r--r--' lib/systemd/system/unetbackd.service
check "contains the modprobe blacklist" has '-rw-r--r--' lib/modprobe.d/unetback.conf
check "contains the modules-load.d file" has '-rw-r--r--' lib/modules-load.d/unetback.conf
check "contains /etc/unetback/unetback.toml" has '-rw-r--r--' etc/unetback/unetback.toml
check "contains the hotplug script" has '-rwxr-xr-x' etc/xen/scripts/vif-bridge-unetback
check "contains unetbackd.8.gz" has '-rw-r--r--' usr/share/man/man8/unetbackd.8.gz
check "contains unetback.toml.5.gz" has '-rw-r--r--' usr/share/man/man5/unetback.toml.5.gz
no_sim_tools() { ! grep -qE '/(sim-xl|netfront-sim|sim-xenstored)$' <<<"$contents"; }
check "no simulation tools" no_sim_tools

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
