#!/usr/bin/env bash
# Print every scheduled job: source | user | schedule | command
set -uo pipefail
row() { printf '%-14s | %-8s | %-17s | %s\n' "$1" "$2" "$3" "$4"; }

strip() { grep -Ev '^[[:space:]]*(#|$)' "$1" 2>/dev/null | grep -Ev '^[A-Za-z_]+='; }

for f in /var/spool/cron/crontabs/*; do
  [ -f "$f" ] || continue
  u=$(basename "$f")
  strip "$f" | while read -r line; do
    if [[ $line == @* ]]; then row crontab "$u" "${line%% *}" "${line#* }"
    else read -r m h dom mon dow cmd <<<"$line"; row crontab "$u" "$m $h $dom $mon $dow" "$cmd"; fi
  done
done

for f in /etc/crontab /etc/cron.d/*; do
  [ -f "$f" ] || continue
  src=$([ "$f" = /etc/crontab ] && echo /etc/crontab || echo /etc/cron.d)
  strip "$f" | while read -r line; do
    if [[ $line == @* ]]; then read -r sched u cmd <<<"$line"; row "$src" "$u" "$sched" "$cmd"
    else read -r m h dom mon dow u cmd <<<"$line"; row "$src" "$u" "$m $h $dom $mon $dow" "$cmd"; fi
  done
done

for period in hourly daily weekly monthly; do
  d=/etc/cron.$period
  [ -d "$d" ] || continue
  for f in "$d"/*; do
    [ -x "$f" ] && [ -f "$f" ] && row "cron.$period" root "$period" "$f"
  done
done

if command -v systemctl >/dev/null; then
  systemctl list-timers --all --no-legend --plain 2>/dev/null | awk '{print $(NF-1), $NF}' |
    while read -r timer unit; do row systemd-timer - "$(systemctl show -p TimersCalendar --value "$timer" 2>/dev/null | head -c 40)" "$timer -> $unit"; done
fi

if command -v atq >/dev/null; then
  atq 2>/dev/null | while read -r id rest; do row at "$(awk '{print $NF}' <<<"$rest")" "$rest" "job $id (at -c $id)"; done
fi
