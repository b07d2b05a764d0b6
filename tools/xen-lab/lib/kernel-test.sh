#!/bin/bash
# xen-lab kernel-test BINARY [ARGS...]: runs a test program on the lab's dom0 kernel
# (Debian 12's, $LAB/boot/vmlinuz) booted bare under QEMU, without Xen, in about ten
# seconds. For what depends on the kernel's version rather than on Xen: the BPF
# verifier that accepts or refuses the steering program is the case in point (Debian 12's
# 6.1 verifier refused a program that newer kernels load). The guest is an initramfs
# with busybox, BINARY, its shared libraries (from this host, which runs the same
# Debian release) and the tun module; BINARY runs as root with /dev/net/tun.
#
# Exit: BINARY's status; 125 when the kernel did not run it (no images: `xen-lab build`).
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=config.sh
. "$HERE/lib/config.sh"

[ $# -ge 1 ] || die "usage: xen-lab kernel-test BINARY [ARGS...]"
binary=$(readlink -f "$1"); shift
[ -x "$binary" ] || die "kernel-test: $binary is not an executable"
if [ ! -f "$LAB/boot/vmlinuz" ] || [ ! -f "$KVER_FILE" ]; then
  log "kernel-test: no images (xen-lab build)"; exit 125
fi
busybox=$(command -v busybox) || die "kernel-test: busybox missing (xen-lab deps)"
tun=$(find "$LAB/dom0-root/lib/modules/$(kver)" -name 'tun.ko*' | head -1)
[ -n "$tun" ] || die "kernel-test: no tun module for $(kver) in the dom0 root"

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,proc,sys,dev,tmp,t}
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$binary" "$root/t/test"
copy_libs / "$binary" "$root"
case "$tun" in
  *.xz) xz -dc "$tun" >"$root/t/tun.ko" ;;
  *.zst) zstd -qdc "$tun" >"$root/t/tun.ko" ;;
  *) cp "$tun" "$root/t/tun.ko" ;;
esac
args=""; for a in "$@"; do args+=" '${a//\'/}'"; done
cat >"$root/init" <<EOF
#!/bin/sh
export PATH=/bin
busybox mount -t proc proc /proc; busybox mount -t sysfs sys /sys
busybox mount -t devtmpfs dev /dev; busybox mount -t tmpfs tmp /tmp
busybox insmod /t/tun.ko
echo "KERNEL-TEST kernel=\$(busybox uname -r)"
ASAN_OPTIONS=detect_leaks=0 /t/test$args 2>&1
echo "KERNEL-TEST rc=\$?"
busybox poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$work/initrd.gz")

log "kernel-test: $(basename "$binary") on $(kver)"
timeout 600 "$QEMU" -accel tcg -cpu max -m 2048 -smp 2 -nographic -no-reboot \
  -kernel "$LAB/boot/vmlinuz" -initrd "$work/initrd.gz" \
  -append "console=ttyS0 quiet panic=-1" >"$work/console.log" 2>&1
sed -n '/KERNEL-TEST kernel=/,/KERNEL-TEST rc=/p' "$work/console.log" | tr -d '\r' | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g'
rc=$(sed -n 's/^KERNEL-TEST rc=\([0-9]*\).*/\1/p' "$work/console.log" | tail -1)
[ -n "$rc" ] || { log "kernel-test: the kernel did not run the test"; tail -20 "$work/console.log"; exit 125; }
exit "$rc"
