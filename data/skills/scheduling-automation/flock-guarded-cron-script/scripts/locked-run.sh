#!/usr/bin/env bash
# Usage: locked-run.sh LOCKFILE COMMAND [ARGS...]
# Runs COMMAND while holding an exclusive flock on LOCKFILE.
# If the lock is busy: skip (exit 75) or wait LOCK_WAIT seconds if that is set.
set -uo pipefail
lock=${1:?usage: locked-run.sh LOCKFILE COMMAND [ARGS...]}
shift
[ $# -gt 0 ] || { echo "locked-run: no command given" >&2; exit 64; }
exec 9>>"$lock"
if [ -n "${LOCK_WAIT:-}" ]; then
  flock -w "$LOCK_WAIT" 9
else
  flock -n 9
fi
if [ $? -ne 0 ]; then
  msg="$lock busy, skipping: $*"
  echo "locked-run: $msg" >&2
  logger -t locked-run -- "$msg" 2>/dev/null || true
  exit 75
fi
"$@"
