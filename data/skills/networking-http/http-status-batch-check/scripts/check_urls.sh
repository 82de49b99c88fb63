#!/usr/bin/env bash
# Usage: check_urls.sh URLFILE
# Prints code<TAB>seconds<TAB>url<TAB>final_url for each URL; exits 1 if any failed.
set -uo pipefail
file=${1:?usage: check_urls.sh URLFILE}
timeout=${CHECK_TIMEOUT:-10}
rc=0
while IFS= read -r url || [ -n "$url" ]; do
  url=${url%%#*}
  url=$(printf '%s' "$url" | tr -d '[:space:]')
  [ -z "$url" ] && continue
  out=$(curl -s -o /dev/null -L --max-time "$timeout" \
        -w '%{http_code}\t%{time_total}\t%{url_effective}' "$url")
  code=${out%%$'\t'*}
  rest=${out#*$'\t'}
  printf '%s\t%s\t%s\t%s\n' "$code" "${rest%%$'\t'*}" "$url" "${rest#*$'\t'}"
  case $code in
    2??|3??) ;;
    *) rc=1 ;;
  esac
done < "$file"
exit $rc
