#!/bin/bash
# Count log lines per level and the components with the most ERROR lines, as TSV.
set -euo pipefail
log="$1"; shift
out=/dev/stdout
if [ "${1:-}" = "-o" ]; then out="$2"; fi
{
  printf 'level\tcount\n'
  awk '{print $3}' "$log" | sort | uniq -c | awk '{printf "%s\t%s\n", $2, $1}' | sort
  printf '\ncomponent\terrors\n'
  awk '$3 == "ERROR" {print $4}' "$log" | sort | uniq -c | sort -k1,1nr -k2 | head -3 | awk '{printf "%s\t%s\n", $2, $1}'
} > "$out"
