#!/usr/bin/env bash
# List processes by open file descriptors as a percentage of their soft NOFILE limit.
# Output columns: PERCENT OPEN SOFT_LIMIT PID COMMAND   (run as root to see all processes)
set -uo pipefail
for d in /proc/[0-9]*; do
  pid=${d#/proc/}
  open=$(ls "$d/fd" 2>/dev/null | wc -l) || continue
  [ "$open" -gt 0 ] || continue
  soft=$(awk '/^Max open files/ {print $4}' "$d/limits" 2>/dev/null)
  [ -n "$soft" ] || continue
  comm=$(cat "$d/comm" 2>/dev/null)
  if [ "$soft" = unlimited ]; then pct=0; else pct=$(( open * 100 / soft )); fi
  printf '%3d%% %7d %8s %7s %s\n' "$pct" "$open" "$soft" "$pid" "$comm"
done | sort -rn
