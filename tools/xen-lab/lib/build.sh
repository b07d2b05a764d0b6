#!/bin/bash
# Build (or reuse) every lab image under $LAB. Each step is cached under a key made of
# its inputs, so a second run only checks the keys (about a second).
#
#   $LAB/dom0-root/            debootstrap'd dom0 tree (+ xen-utils, iperf3, sockperf, libs)
#   $LAB/boot/xen.elf          decompressed Xen 4.17 (QEMU's multiboot loader wants the ELF)
#   $LAB/boot/vmlinuz          Debian kernel, used for dom0 and the guests
#   $LAB/dom0-base.cpio        uncompressed newc cpio of the dom0 tree (the initramfs base)
#   $LAB/domU-initrd.cpio.gz   guest initramfs: busybox, iperf3, sockperf, xen-netfront,
#                              the modules netfront-sim needs (gntalloc, evtchn, tun)
#   $LAB/dd-archive.cpio.gz    a driver domain's second archive (DD_PROGS, DD_MODULES)
#
# usage: build.sh [--clean | --rebuild-rootfs]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=config.sh
. "$HERE/lib/config.sh"
case "${1:-}" in
  --clean) log "wiping $LAB"; rm -rf "$LAB" ;;
  --rebuild-rootfs) rm -rf "$LAB/dom0-root" ;;
  "") ;;
  *) die "build.sh: unknown option $1" ;;
esac
mkdir -p "$LAB"
ROOT="$LAB/dom0-root"
PK="$LAB/pkgroot"

key_of() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }
stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }
file_key() { cat "$@" | sha256sum | cut -c1-16; }

build_rootfs() {
  local key; key=$(key_of "$SUITE" "$MIRROR" "$DOM0_PKGS" rootfs-v1)
  stamp_ok "$ROOT/.lab-rootfs" "$key" && return 0
  rm -rf "$ROOT"
  log "debootstrap --variant=minbase $SUITE -> $ROOT (log: $LAB/debootstrap.log)"
  debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$LAB/debootstrap.log" 2>&1 \
    || { tail -20 "$LAB/debootstrap.log" >&2; die "debootstrap failed"; }
  cat >"$ROOT/etc/apt/sources.list" <<SRC
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
SRC
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"   # start no services in the chroot
  chmod +x "$ROOT/usr/sbin/policy-rc.d"
  # shellcheck disable=SC2086,SC2116  # echo joins the list's lines into one line for the log
  log "installing into the dom0 root: $(echo $DOM0_PKGS)"
  mount --bind /proc "$ROOT/proc"
  trap 'umount "$ROOT/proc" 2>/dev/null || true' EXIT
  chroot "$ROOT" apt-get update -q >>"$LAB/debootstrap.log" 2>&1
  # shellcheck disable=SC2086  # a package list, split into words on purpose
  DEBIAN_FRONTEND=noninteractive chroot "$ROOT" apt-get install -y -q --no-install-recommends $DOM0_PKGS \
    >>"$LAB/debootstrap.log" 2>&1 || { tail -30 "$LAB/debootstrap.log" >&2; die "apt-get install in the dom0 root failed"; }
  # shellcheck disable=SC2016  # ${Package} ${Version}: dpkg-query's format fields
  chroot "$ROOT" dpkg-query -W -f='${Package} ${Version}\n' >"$LAB/dom0-packages.txt"
  # the kernel and hypervisor packages are downloaded (not installed) with the same apt lists
  fetch_boot_debs
  umount "$ROOT/proc"; trap - EXIT
  rm -rf "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT"/usr/share/info/* \
    "$ROOT"/usr/share/locale/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/cache/apt/archives/*.deb \
    "$ROOT"/var/lib/apt/lists/*_* "$ROOT"/usr/share/zoneinfo/[a-z]* "$ROOT"/usr/lib/xen-4.17/boot \
    "$ROOT"/boot/xen* 2>/dev/null || true
  find "$ROOT"/usr/lib/python3* -name __pycache__ -prune -exec rm -rf {} + 2>/dev/null || true
  echo "$key" >"$ROOT/.lab-rootfs"
}

fetch_boot_debs() {
  local kpkg kver
  kpkg=$(chroot "$ROOT" apt-cache depends "$KERNEL_META_PKG" | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
  [ -n "$kpkg" ] || die "cannot resolve $KERNEL_META_PKG"
  kver=${kpkg#linux-image-}
  rm -rf "$PK" "$ROOT/tmp/debs"; mkdir -p "$PK" "$ROOT/tmp/debs" "$LAB/boot"
  chroot "$ROOT" chown _apt /tmp/debs 2>/dev/null || true
  chroot "$ROOT" sh -c "cd /tmp/debs && apt-get download -q $kpkg $XEN_HV_PKG" >>"$LAB/debootstrap.log" 2>&1 \
    || die "apt-get download $kpkg $XEN_HV_PKG failed"
  local d
  for d in "$ROOT"/tmp/debs/*.deb; do dpkg-deb -x "$d" "$PK"; done
  ls "$ROOT"/tmp/debs >"$LAB/boot-packages.txt"
  rm -rf "$ROOT/tmp/debs"
  zcat "$PK"/boot/xen-4.17-amd64.gz >"$LAB/boot/xen.elf"
  cp "$PK/boot/vmlinuz-$kver" "$LAB/boot/vmlinuz"
  depmod -b "$PK" "$kver"
  echo "$kver" >"$KVER_FILE"
  log "kernel $kver, $(grep xen-hyp "$LAB/boot-packages.txt")"
}

copy_modules() {   # copy_modules DEST_ROOT DEST_SUBDIR MODULE...
  local dest=$1 sub=$2 m f; shift 2
  for m in "$@"; do
    modprobe -d "$PK" -S "$(kver)" --show-depends "$m" | awk '$1=="insmod"{print $2}' | while read -r f; do
      if [ -n "$sub" ]; then cp "$f" "$dest/$sub/"; else
        mkdir -p "$dest/$(dirname "${f#"$PK"/}")"; cp -n "$f" "$dest/${f#"$PK"/}"; fi
    done
  done
}

build_dom0_cpio() {
  local key; key=$(key_of "$(cat "$ROOT/.lab-rootfs")" "$(kver)" "$DOM0_MODULES" \
    "$(file_key "$HERE/dom0/modprobe-unetback-lab.conf")" base-v1)
  stamp_ok "$LAB/dom0-base.key" "$key" && [ -f "$LAB/dom0-base.cpio" ] && return 0
  log "dom0: modules of $(kver), modprobe policy, packing $LAB/dom0-base.cpio"
  rm -rf "$ROOT/lib/modules"; mkdir -p "$ROOT/lib/modules/$(kver)"
  cp "$PK/lib/modules/$(kver)"/modules.{order,builtin,builtin.modinfo} "$ROOT/lib/modules/$(kver)/" 2>/dev/null || true
  # shellcheck disable=SC2086  # a module list, split into words on purpose
  copy_modules "$ROOT" "" $DOM0_MODULES
  depmod -b "$ROOT" "$(kver)"
  # the kernel netback must stay unloaded while unetbackd serves (spec §1.11)
  install -D -m 0644 "$HERE/dom0/modprobe-unetback-lab.conf" "$ROOT/etc/modprobe.d/unetback-lab.conf"
  echo unetback-lab-dom0 >"$ROOT/etc/hostname"
  (cd "$ROOT" && find . -xdev | LC_ALL=C sort | cpio -o -H newc --quiet) >"$LAB/dom0-base.cpio.tmp"
  mv "$LAB/dom0-base.cpio.tmp" "$LAB/dom0-base.cpio"
  echo "$key" >"$LAB/dom0-base.key"
  log "dom0 cpio: $(du -h "$LAB/dom0-base.cpio" | cut -f1)"
}

build_domu_initrd() {
  local key; key=$(key_of "$(cat "$ROOT/.lab-rootfs")" "$(kver)" "$DOMU_PROGS" "$DOMU_MODULES" \
    "$(file_key "$HERE/domU/init" /bin/busybox)" domu-v2)
  stamp_ok "$LAB/domU-initrd.key" "$key" && [ -f "$LAB/domU-initrd.cpio.gz" ] && return 0
  local T="$LAB/domU-root" p
  rm -rf "$T"; mkdir -p "$T"/{bin,sbin,proc,sys,dev,tmp,lib/modules,lib64,usr/bin,etc}
  cp /bin/busybox "$T/bin/busybox"   # busybox-static from the host
  ln -s busybox "$T/bin/sh"
  for p in $DOMU_PROGS; do
    [ -x "$ROOT/$p" ] || die "$p missing in the dom0 root"
    cp "$ROOT/$p" "$T/usr/bin/"
    copy_libs "$ROOT" "$p" "$T"
  done
  # shellcheck disable=SC2086  # a module list, split into words on purpose
  copy_modules "$T" lib/modules $DOMU_MODULES
  install -m 0755 "$HERE/domU/init" "$T/init"
  echo "root:x:0:0:root:/root:/bin/sh" >"$T/etc/passwd"
  printf '127.0.0.1 localhost\n' >"$T/etc/hosts"
  pack_guest_archive "$T" >"$LAB/domU-initrd.cpio.gz"
  echo "$key" >"$LAB/domU-initrd.key"
  log "guest initrd: $(du -h "$LAB/domU-initrd.cpio.gz" | cut -f1)"
}

build_dd_archive() {   # unpacked over the guest initrd: the driver-domain tools
  local key; key=$(key_of "$(cat "$ROOT/.lab-rootfs")" "$(kver)" "$DD_PROGS" "$DD_MODULES" dd-v1)
  stamp_ok "$LAB/dd-archive.key" "$key" && [ -f "$LAB/dd-archive.cpio.gz" ] && return 0
  local T="$LAB/dd-root" e dir p
  rm -rf "$T"; mkdir -p "$T/lib/modules"
  for e in $DD_PROGS; do
    dir=${e%%:*}; p=${e#*:}
    [ -x "$ROOT/$p" ] || die "$p missing in the dom0 root"
    mkdir -p "$T/$dir"; cp -L "$ROOT/$p" "$T/$dir/"
    copy_libs "$ROOT" "$p" "$T"
  done
  # shellcheck disable=SC2086  # a module list, split into words on purpose
  copy_modules "$T" lib/modules $DD_MODULES
  pack_guest_archive "$T" >"$LAB/dd-archive.cpio.gz"
  echo "$key" >"$LAB/dd-archive.key"
  log "driver-domain archive: $(du -h "$LAB/dd-archive.cpio.gz" | cut -f1)"
}

t0=$SECONDS
"$HERE/lib/host-deps.sh"
build_rootfs
{ [ -f "$LAB/boot/xen.elf" ] && [ -f "$LAB/boot/vmlinuz" ] && [ -f "$KVER_FILE" ]; } || {
  mount --bind /proc "$ROOT/proc"; trap 'umount "$ROOT/proc" 2>/dev/null || true' EXIT
  fetch_boot_debs; umount "$ROOT/proc"; trap - EXIT; }
build_dom0_cpio
build_domu_initrd
build_dd_archive
log "images ready in $LAB ($((SECONDS - t0)) s)"
