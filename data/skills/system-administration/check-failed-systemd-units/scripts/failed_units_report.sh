#!/usr/bin/env bash
# Print a report of every failed systemd unit: result, exit status and recent log lines.
set -uo pipefail
lines=${LINES_PER_UNIT:-15}
mapfile -t units < <(systemctl --failed --no-legend --plain | awk '{print $1}')
if [ "${#units[@]}" -eq 0 ]; then
  echo "no failed units ($(systemctl is-system-running 2>/dev/null))"
  exit 0
fi
for u in "${units[@]}"; do
  echo "=== $u ==="
  systemctl show "$u" -p Result -p ExecMainStatus -p ActiveEnterTimestamp --no-pager | paste -sd' ' -
  journalctl -u "$u" -n "$lines" --no-pager -o short 2>/dev/null
  echo
done
