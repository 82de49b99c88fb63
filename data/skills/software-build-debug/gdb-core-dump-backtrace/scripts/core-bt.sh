#!/usr/bin/env bash
# core-bt.sh BINARY CORE  -> prints threads, full backtrace and registers
set -euo pipefail
if [ "$#" -ne 2 ]; then
  echo "usage: $0 BINARY CORE" >&2
  exit 2
fi
bin="$1"; core="$2"
[ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 2; }
[ -r "$core" ] || { echo "cannot read core: $core" >&2; exit 2; }

gdb -q -batch -nx \
  -ex 'set pagination off' \
  -ex 'set print pretty on' \
  -ex 'echo === threads ===\n' -ex 'info threads' \
  -ex 'echo === backtrace (crashing thread) ===\n' -ex 'bt full' \
  -ex 'echo === all threads ===\n' -ex 'thread apply all bt' \
  -ex 'echo === registers ===\n' -ex 'info registers' \
  "$bin" "$core"
