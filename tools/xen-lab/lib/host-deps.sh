#!/bin/bash
# Install the host packages the lab needs (Debian 12). Idempotent: does nothing when
# they are all present.
set -euo pipefail
. "$(dirname "$0")/config.sh"
need=""
for p in $HOST_PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "ok installed" >/dev/null || need="$need $p"
done
[ -z "$need" ] && exit 0
[ "$(id -u)" = 0 ] || die "missing host packages:$need (run as root)"
log "installing host packages:$need"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086  # a package list, split into words on purpose
apt-get install -y -q --no-install-recommends $need >/dev/null 2>&1 || {
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends $need >/dev/null
}
