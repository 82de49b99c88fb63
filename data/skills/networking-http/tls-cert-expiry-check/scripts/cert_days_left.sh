#!/usr/bin/env bash
# Usage: cert_days_left.sh LISTFILE [WARN_DAYS]
# LISTFILE lines: host:port or a path to a PEM file. Exit 1 if any cert is close to expiry.
set -uo pipefail
list=${1:?usage: cert_days_left.sh LISTFILE [WARN_DAYS]}
warn=${2:-21}
now=$(date +%s)
rc=0
while IFS= read -r target || [ -n "$target" ]; do
  case $target in ''|'#'*) continue ;; esac
  if [ -f "$target" ]; then
    pem=$(cat "$target")
  else
    host=${target%:*}
    pem=$(timeout 10 openssl s_client -connect "$target" -servername "$host" </dev/null 2>/dev/null \
          | openssl x509 2>/dev/null)
  fi
  if [ -z "$pem" ]; then
    printf 'ERROR  -    -  %s  (no certificate)\n' "$target"; rc=1; continue
  fi
  end=$(openssl x509 -noout -enddate <<<"$pem" | cut -d= -f2)
  subj=$(openssl x509 -noout -subject -nameopt oneline <<<"$pem" | sed 's/^subject= *//')
  days=$(( ($(date -d "$end" +%s) - now) / 86400 ))
  state=OK
  if [ "$days" -lt "$warn" ]; then state=WARN; rc=1; fi
  printf '%-6s %-4s %s  %s  %s\n' "$state" "$days" "$end" "$target" "$subj"
done < "$list"
exit $rc
