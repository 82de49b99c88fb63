#!/usr/bin/env bash
# ssh-report.sh LOGFILE...  (plain or .gz syslog-style auth logs)
set -euo pipefail
[ "$#" -ge 1 ] || { echo "usage: $0 /var/log/auth.log*" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

zcat -f -- "$@" | grep 'sshd\[' > "$tmp/sshd" || true

# Failed password lines: user is the word after "for" (or after "invalid user").
awk '/Failed password for/ {
       for (i = 1; i <= NF; i++) {
         if ($i == "for") { user = ($(i+1) == "invalid") ? $(i+3) : $(i+1) }
         if ($i == "from") { ip = $(i+1) }
       }
       print ip, user
     }' "$tmp/sshd" > "$tmp/failed"

awk '/Accepted (password|publickey|keyboard-interactive)/ {
       for (i = 1; i <= NF; i++) {
         if ($i == "Accepted") { method = $(i+1) }
         if ($i == "for") { user = $(i+1) }
         if ($i == "from") { ip = $(i+1) }
       }
       print ip, user, method
     }' "$tmp/sshd" > "$tmp/accepted"

echo "== Failed attempts by source IP (top 15) =="
awk '{print $1}' "$tmp/failed" | sort | uniq -c | sort -rn | head -n 15
echo
echo "== Failed attempts by username (top 15) =="
awk '{print $2}' "$tmp/failed" | sort | uniq -c | sort -rn | head -n 15
echo
echo "== Successful logins (ip user method, count) =="
sort "$tmp/accepted" | uniq -c | sort -rn
echo
echo "== Successful logins from IPs that also failed =="
awk '{print $1}' "$tmp/failed" | sort -u > "$tmp/failed_ips"
awk '{print $1}' "$tmp/accepted" | sort -u | comm -12 - "$tmp/failed_ips" || true
