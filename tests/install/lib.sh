# shellcheck shell=bash
# Helpers shared by the install-tier tests (sourced).
set -euo pipefail

FAILURES=0
WORK=$(mktemp -d /tmp/unetback-install.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

check() {  # check DESCRIPTION COMMAND...: records a failure instead of exiting
  local what=$1
  shift
  if "$@" >/dev/null 2>&1; then
    echo "ok   $what"
  else
    echo "FAIL $what" >&2
    FAILURES=$((FAILURES + 1))
  fi
}

finish() {
  if ((FAILURES > 0)); then
    echo "$FAILURES check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}

# parse_programs ARGS...: "--program NAME" pairs into PROGRAMS.
PROGRAMS=()
parse_programs() {
  while (($#)); do
    case "$1" in
      --program) PROGRAMS+=("$2"); shift 2 ;;
      *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
  done
}
