#!/usr/bin/env bash
# Usage: retry.sh [-n attempts] [-d initial_delay] [-m max_delay] [-c codes] -- command [args...]
#   -c 7,28   only retry when the exit code is in this comma-separated list
set -uo pipefail
attempts=5 delay=2 max=60 codes=""
while getopts "n:d:m:c:" opt; do
  case $opt in
    n) attempts=$OPTARG ;;
    d) delay=$OPTARG ;;
    m) max=$OPTARG ;;
    c) codes=",$OPTARG," ;;
    *) echo "usage: retry.sh [-n N] [-d S] [-m S] [-c codes] -- cmd" >&2; exit 64 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "retry: no command" >&2; exit 64; }

for ((i = 1; i <= attempts; i++)); do
  "$@"
  rc=$?
  [ $rc -eq 0 ] && exit 0
  if [ -n "$codes" ] && [[ $codes != *",$rc,"* ]]; then
    echo "retry: rc=$rc is not retryable, stopping" >&2
    exit $rc
  fi
  if [ $i -eq "$attempts" ]; then
    break
  fi
  echo "retry: attempt $i/$attempts failed (rc=$rc), sleeping ${delay}s" >&2
  sleep "$delay.$((RANDOM % 10))"
  delay=$((delay * 2))
  [ $delay -gt "$max" ] && delay=$max
done
echo "retry: giving up after $attempts attempts (rc=$rc)" >&2
exit $rc
