# shellcheck shell=bash
# Settings of the unetback Xen lab (sourced by every lab script).
# Big files live under $LAB (default /var/tmp/unetback-lab), never in the repository.
# This file only sets variables for the scripts that source it (xen-lab, lib/*.sh):
# shellcheck disable=SC2034  # (whole file) its variables are read by those scripts

LAB="${UNETBACK_LAB_DIR:-/var/tmp/unetback-lab}"
SUITE="${UNETBACK_LAB_SUITE:-bookworm}"
MIRROR="${UNETBACK_LAB_MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${UNETBACK_LAB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"

# Debian packages (bookworm). The kernel ABI is resolved from the metapackage at fetch
# time and recorded in $LAB/kernel-version.
XEN_HV_PKG="xen-hypervisor-4.17-amd64"
KERNEL_META_PKG="linux-image-amd64"

# dom0 root: debootstrap minbase + these. The library packages are what unetbackd links
# (checked with ldd on the built binary; anything still missing at boot time is copied
# from the host, which runs the same Debian release).
DOM0_PKGS="xen-utils-4.17 xenstore-utils iproute2 iperf3 sockperf bridge-utils kmod busybox procps linux-perf
  libspdlog1.10 libfmt9 libcap-ng0 libsystemd0 libtomlplusplus3 libstdc++6"
DOM0_MODULES="xenfs xen-netback xen-netfront xen-gntdev xen-gntalloc xen-evtchn xen-privcmd bridge tun veth"
# xen-gntalloc, xen-evtchn and tun: netfront-sim --platform xen inside the guest (lab.netfront=sim)
DOMU_MODULES="xen-netfront xen-gntalloc xen-evtchn tun"
# programs copied (with their libraries) from the dom0 root into the guest initrd
DOMU_PROGS="/usr/bin/iperf3 /usr/bin/sockperf"
# A network driver domain (scenario driver-domain) boots the guest initrd plus a second
# archive: xl (for `xl devd`, which runs the vifs' hotplug scripts there), what the
# hotplug script calls (bash, xenstore-read/-write; busybox's ip does the rest) and the
# modules of both backends. Target directory:program.
DD_PROGS="usr/bin:/usr/lib/xen-4.17/bin/xl bin:/usr/bin/bash usr/bin:/usr/bin/xenstore-read usr/bin:/usr/bin/xenstore-write usr/bin:/usr/bin/xenstore-rm
  usr/bin:/usr/bin/xenstore-ls"
DD_MODULES="xenfs xen-privcmd xen-gntdev xen-evtchn xen-netback tun bridge"

# Host packages the lab needs (installed by `xen-lab deps`, idempotently).
HOST_PKGS="qemu-system-x86 debootstrap busybox-static cpio kmod zstd xz-utils util-linux"

# QEMU. This machine's /dev/kvm is kvm_pvm (no VMX): it interprets every supervisor
# instruction and cannot run Xen, so TCG is the default; KVM is used only where a
# hardware-virtualising KVM (kvm_intel / kvm_amd) is loaded. UNETBACK_LAB_ACCEL=tcg|kvm forces.
#  -smap,-smep: PV dom0 dies at its first instruction with them (#PF in create_bounce_frame)
#  -rdtscp:     TCG's nested SVM cannot report RDTSCP exits (matters for PVH/HVM guests)
#  -xsave:      TCG's XSAVE state handling corrupts dom0 processes on vCPU switches
QEMU="${UNETBACK_LAB_QEMU:-qemu-system-x86_64}"
QEMU_SMP="${UNETBACK_LAB_SMP:-2}"
QEMU_MEM="${UNETBACK_LAB_MEM:-3072}"
# TCG threading: multi-threaded TCG (one host thread per vCPU) is fastest on an idle host,
# but when the host is busy its cross-vCPU rendezvous (TLB flushes) wait for descheduled
# threads: measured here under a compile load, a guest took 164 s to boot with
# thread=multi and 36 s with thread=single. Auto: multi when the host has >= 4 cores or is
# idle (host_idle below), else single. UNETBACK_LAB_TCG=multi|single forces.
QEMU_TCG_THREAD="${UNETBACK_LAB_TCG:-auto}"
QEMU_TCG_CPU="max,-smap,-smep,-rdtscp,-xsave"

# host_busy_cores [SECONDS]: the cores' worth of CPU this host used over the next
# SECONDS (default 5), from /proc/stat's first line; e.g. 0.07 or 1.93.
host_busy_cores() {
  local a b
  a=$(head -n 1 /proc/stat); sleep "${1:-5}"; b=$(head -n 1 /proc/stat)
  awk -v a="$a" -v b="$b" -v n="$(nproc)" 'BEGIN {
    split(a, x); split(b, y); total = 0; idle = 0
    for (i = 2; i <= 9; i++) total += y[i] - x[i]
    idle = (y[5] - x[5]) + (y[6] - x[6])   # idle + iowait
    printf "%.2f\n", (total > 0) ? n * (total - idle) / total : 0 }'
}
# host_idle: under half a core busy over 5 s. (The 1-min load average, used before,
# lags the end of a build: it falls below 1 only about a minute after a two-core
# build ends, and that minute was spent waiting in every gate.)
host_idle() { awk -v b="$(host_busy_cores 5)" 'BEGIN { exit !(b < 0.5) }'; }

XEN_CMDLINE="dom0_mem=1536M,max:1536M dom0_max_vcpus=2 console=com1 com1=115200,8n1 loglvl=all guest_loglvl=all"
DOM0_CMDLINE="console=hvc0 earlyprintk=xen panic=-1 quiet"

KVER_FILE="$LAB/kernel-version"
kver() { cat "$KVER_FILE"; }

# copy_libs SRC_ROOT PROGRAM DEST_ROOT: PROGRAM's shared libraries, as ldd resolves
# them inside SRC_ROOT (/ for this host), to the same paths under DEST_ROOT.
copy_libs() {
  local src=$1 prog=$2 dest=$3 lib
  # shellcheck disable=SC2016  # $1/$3 are awk's fields
  for lib in $(chroot "$src" ldd "$prog" | awk '/=>/{print $3} /ld-linux/{print $1}'); do
    mkdir -p "$dest/$(dirname "$lib")"; cp -L "$src/$lib" "$dest/$lib"
  done
}

# pack_guest_archive DIR: DIR's tree as a gzip'd newc cpio on stdout (a guest initrd, or
# an archive the guest's kernel unpacks after it)
pack_guest_archive() { (cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1); }

log() { printf '[xen-lab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
