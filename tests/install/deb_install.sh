#!/usr/bin/env bash
# The .deb for real: `apt-get install -y --no-install-recommends ./unetback_*.deb`
# on this machine, checks of the installed tree (programs, unit, modprobe file,
# man pages, configuration, hotplug script, docs), `unetbackd --version`,
# `systemd-analyze verify` of the installed unit, then `apt-get purge -y
# unetback` and checks that nothing of it is left. Root only.
#
#   deb_install.sh DEBS_DIR         installs DEBS_DIR/unetback_*.deb, the package
#                                   tests/install/build_debs.sh built there
#   deb_install.sh --deb FILE.deb   installs FILE.deb
#
# Safe on a development machine: it refuses (exit 2) when unetback is already
# installed (in any dpkg state) or when a file the package would install already
# exists (a `cmake --install` to /usr, say); on exit, also on failure or Ctrl-C,
# it purges the package and the dependencies that apt installed for it, so the
# machine's package set is what it was before. Exit: 0 all checks passed, 1 a
# check failed, 2 refused (not root, unetback present, no apt-get).
source "$(dirname "$0")/lib.sh"

refuse() {
  echo "deb_install.sh: $*" >&2
  exit 2
}
[[ $EUID -eq 0 ]] || refuse "needs root (it installs and purges the package)"
{ command -v apt-get >/dev/null && command -v dpkg >/dev/null; } || refuse "needs apt-get and dpkg"

case "${1:-}" in
  --deb)
    [[ -f "${2:-}" ]] || refuse "no such file: ${2:-}"
    deb=$(realpath "$2") ;;
  "" | -h | --help) sed -n '2,17p' "$0"; exit 2 ;;
  *)
    debs=("$1"/unetback_*.deb)
    [[ ${#debs[@]} -eq 1 && -f "${debs[0]}" ]] ||
      { echo "FAIL expected one $1/unetback_*.deb (tests/install/build_debs.sh)" >&2; exit 1; }
    deb=$(realpath "${debs[0]}") ;;
esac
version=$(dpkg-deb -f "$deb" Version)
echo "package: $(basename "$deb") (version $version)"

# ---- refuse to touch an existing installation ----
if dpkg-query -W -f '${Status}' unetback 2>/dev/null | grep -qv 'not-installed'; then
  refuse "unetback is already known to dpkg here ($(dpkg-query -W -f '${Status}' unetback));" \
    "purge it first: this test would remove it"
fi
# Every regular file of the package, as an absolute path.
mapfile -t payload < <(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {sub(/^\./, "", $6); print $6}')
((${#payload[@]} > 0)) || { echo "FAIL the .deb lists no files" >&2; exit 1; }
for f in "${payload[@]}"; do
  [[ ! -e "$f" && ! -L "$f" ]] || refuse "$f exists already (not from the unetback package)"
done

# ---- install; undo on every exit ----
dpkg-query -W -f '${Package}\n' | sort >"$WORK/packages.before"
installed=0
undo() {
  local rc=$?
  set +e
  if ((installed)); then
    apt-get purge -y unetback >"$WORK/purge-on-exit.log" 2>&1
    dpkg-query -W -f '${Package}\n' | sort >"$WORK/packages.now"
    mapfile -t extra < <(comm -13 "$WORK/packages.before" "$WORK/packages.now")
    if ((${#extra[@]})); then
      echo "removing what apt installed for the test: ${extra[*]}"
      apt-get purge -y "${extra[@]}" >>"$WORK/purge-on-exit.log" 2>&1
    fi
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap undo EXIT
trap 'exit 130' INT TERM

installed=1
# Without Recommends: xen-utils-4.17 would pull in the hypervisor, QEMU and GRUB's
# Xen entries (26 packages on Debian 12), which this check does not need.
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$deb" \
  >"$WORK/apt-install.log" 2>&1; then
  cat "$WORK/apt-install.log" >&2
  echo "FAIL apt-get install -y ./$(basename "$deb")" >&2
  exit 1
fi
echo "ok   apt-get install -y ./$(basename "$deb")"
grep -E '^(Setting up unetback|unetback:)' "$WORK/apt-install.log" | sed 's/^/     /' || true

status() { dpkg-query -W -f '${Status}' unetback 2>/dev/null; }
check "dpkg: unetback is 'install ok installed'" test "$(status)" = "install ok installed"
check "dpkg: version $version" test "$(dpkg-query -W -f '${Version}' unetback)" = "$version"

# ---- the installed tree ----
libraries_found() { ! ldd "$1" | grep -q 'not found'; }
for p in unetbackd unetbackctl; do
  check "/usr/sbin/$p is an executable, root-owned" \
    test -x "/usr/sbin/$p" -a "$(stat -c %U:%a "/usr/sbin/$p")" = root:755
  check "/usr/sbin/$p finds every shared library" libraries_found "/usr/sbin/$p"
done
check "unetbackd --version prints 'unetbackd $version'" \
  bash -c "/usr/sbin/unetbackd --version | grep -qx 'unetbackd $version'"
check "unetbackctl --help exits 0 and names its commands" \
  bash -c "/usr/sbin/unetbackctl --help | grep -q 'log-level'"
check "unetbackctl without a daemon: exit 1, names the socket" \
  bash -c "out=\$(/usr/sbin/unetbackctl --socket $WORK/none.sock list 2>&1); \
    [[ \$? == 1 && \$out == *'$WORK/none.sock'* ]]"
file_is() {  # file_is PATH MODE: a regular file, root-owned, with MODE
  test -f "$1" && test "$(stat -c %U:%a "$1")" = "root:$2"
}
check "unit /lib/systemd/system/unetbackd.service" file_is /lib/systemd/system/unetbackd.service 644
check "unit runs the installed daemon" \
  grep -q '^ExecStart=/usr/sbin/unetbackd ' /lib/systemd/system/unetbackd.service
# Enabled by the package (it starts at the next boot), not started (debian/rules).
check "unit enabled: multi-user.target wants it" \
  test -L /etc/systemd/system/multi-user.target.wants/unetbackd.service
if [[ -d /run/systemd/system ]]; then
  check "unit not started by the package" \
    bash -c "! systemctl --quiet is-active unetbackd.service"
fi
check "modprobe file /lib/modprobe.d/unetback.conf" file_is /lib/modprobe.d/unetback.conf 644
check "modprobe file blacklists xen-netback" \
  grep -Eq '^(blacklist xen[-_]netback|install xen[-_]netback )' /lib/modprobe.d/unetback.conf
check "modules-load.d file /lib/modules-load.d/unetback.conf loads tun" \
  grep -qx tun /lib/modules-load.d/unetback.conf
check "configuration /etc/unetback/unetback.toml" file_is /etc/unetback/unetback.toml 644
check "configuration is a dpkg conffile" \
  bash -c "dpkg-query -W -f '\${Conffiles}' unetback | grep -q '/etc/unetback/unetback.toml'"
check "hotplug script /etc/xen/scripts/vif-bridge-unetback" \
  file_is /etc/xen/scripts/vif-bridge-unetback 755
for m in man8/unetbackd.8.gz man8/unetbackctl.8.gz man5/unetback.toml.5.gz; do
  check "man page /usr/share/man/$m (gzip, a .TH header)" \
    bash -c "zcat /usr/share/man/$m | grep -q '^\.TH '"
done
if command -v man >/dev/null; then
  check "man -w unetbackd finds the installed page" \
    bash -c "man -w unetbackd | grep -q /usr/share/man/man8/unetbackd.8.gz"
fi
check "doc /usr/share/doc/unetback/operator-guide.md" test -f /usr/share/doc/unetback/operator-guide.md
check "no simulation tools installed" \
  bash -c "! dpkg -L unetback | grep -Eq '/(sim-xl|netfront-sim|sim-xenstored|tap-relay)$'"
if command -v systemd-analyze >/dev/null; then
  out=$(systemd-analyze verify --man=no /lib/systemd/system/unetbackd.service 2>&1) || true
  check "systemd-analyze verify of the installed unit prints nothing" test -z "$out"
  # shellcheck disable=SC2001  # indents every line of $out: not one ${out//...}
  [[ -z "$out" ]] || echo "$out" | sed 's/^/     /' >&2
else
  echo "skip systemd-analyze verify (systemd-analyze missing)"
fi

# ---- purge: nothing left ----
if ! apt-get purge -y unetback >"$WORK/apt-purge.log" 2>&1; then
  cat "$WORK/apt-purge.log" >&2
  echo "FAIL apt-get purge -y unetback" >&2
  exit 1
fi
installed=0
echo "ok   apt-get purge -y unetback"
check "dpkg: unetback is gone (not even config-files)" \
  bash -c "! dpkg-query -W -f '\${Status}' unetback 2>/dev/null | grep -q installed"
left=()
for f in "${payload[@]}"; do
  [[ -e "$f" || -L "$f" ]] && left+=("$f")
done
check "no file of the package is left (${#left[@]} left: ${left[*]:-none})" test ${#left[@]} -eq 0
check "/etc/unetback is gone" test ! -e /etc/unetback
no_enable_links() {
  [[ -z "$(find /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled \
    -name '*unetbackd*' 2>/dev/null)" ]]
}
check "no unit enablement left (links, deb-systemd-helper state)" no_enable_links
# What apt pulled in for the package goes too: the package set is as before.
dpkg-query -W -f '${Package}\n' | sort >"$WORK/packages.after"
mapfile -t extra < <(comm -13 "$WORK/packages.before" "$WORK/packages.after")
if ((${#extra[@]})); then
  echo "purging what apt installed for the package: ${extra[*]}"
  apt-get purge -y "${extra[@]}" >"$WORK/apt-purge-deps.log" 2>&1 || true
  dpkg-query -W -f '${Package}\n' | sort >"$WORK/packages.after"
fi
check "the package set is what it was before" cmp -s "$WORK/packages.before" "$WORK/packages.after"
finish
