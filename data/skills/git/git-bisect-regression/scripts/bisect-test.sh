#!/usr/bin/env bash
# Usage: bisect-test.sh <test command...>
# Exit 0 = good, 1 = bad, 125 = skip (cannot build this revision).
set -u
if [ "$#" -eq 0 ]; then
  echo "usage: $0 <test command...>" >&2
  exit 128
fi
# Remove stale build outputs from the previous bisect step, keep the virtualenv.
git clean -fdxq -e .venv -e venv
if [ -f Makefile ]; then
  if ! make -s build >/dev/null 2>&1; then
    echo "build failed at $(git rev-parse --short HEAD), skipping" >&2
    exit 125
  fi
fi
"$@"
rc=$?
if [ "$rc" -eq 0 ]; then
  exit 0
fi
# Never let an odd exit code abort the bisect: map everything else to "bad".
exit 1
