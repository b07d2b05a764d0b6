#!/usr/bin/env bash
# Builds the source and binary packages with `dpkg-buildpackage -us -uc` from a copy
# of SOURCE_DIR's files (tracked and untracked, not ignored: a clean clone's
# tree plus the changes at hand) in a temporary folder, since dpkg-buildpackage
# writes its results beside the source tree; then moves the results (.dsc,
# .tar.xz, the .debs with their -dbgsym .debs, .buildinfo, .changes) into
# OUT_DIR, replacing what was there. The install.deb and deb_system.install_purge
# tests check them. UNETBACK_DEB_BUILD_OPTIONS adds to DEB_BUILD_OPTIONS (the gate:
# noopt).
#   build_debs.sh SOURCE_DIR OUT_DIR
source "$(dirname "$0")/lib.sh"
src=$1
out=$2

for tool in git dpkg-buildpackage dh; do
  command -v "$tool" >/dev/null ||
    { echo "FAIL $tool missing (tools/deps installs it)" >&2; exit 1; }
done

# copy_tree SRC DEST: the files git would put in a commit of SRC's work tree.
copy_tree() {
  local f files=()
  while IFS= read -r -d '' f; do
    if [[ -e "$1/$f" || -L "$1/$f" ]]; then files+=("$f"); fi  # not deleted
  done < <(git -C "$1" ls-files -z --cached --others --exclude-standard)
  mkdir -p "$2"
  printf '%s\0' "${files[@]}" | tar -C "$1" --null -T - -cf - | tar -C "$2" -xf -
}
copy_tree "$src" "$WORK/unetback"

rm -rf "$out"
mkdir -p "$out"
echo "dpkg-buildpackage -us -uc (log: $out/build.log)"
if ! (cd "$WORK/unetback" &&
  DEB_BUILD_OPTIONS="parallel=${UNETBACK_DEB_JOBS:-2} ${UNETBACK_DEB_BUILD_OPTIONS:-}" \
    dpkg-buildpackage -us -uc) \
  >"$out/build.log" 2>&1; then
  tail -n 40 "$out/build.log" >&2
  echo "FAIL dpkg-buildpackage -us -uc" >&2
  exit 1
fi
shopt -s nullglob
results=("$WORK"/unetback_* "$WORK"/unetback-*)
mv "${results[@]}" "$out/"
ls -1 "$out"
check "built the unetback .deb" compgen -G "$out/unetback_*.deb"
check "built the unetback-sim .deb" compgen -G "$out/unetback-sim_*.deb"
check "built the source package (.dsc)" compgen -G "$out/unetback_*.dsc"
check "built a .changes" compgen -G "$out/unetback_*.changes"
finish
