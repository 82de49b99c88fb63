#!/usr/bin/env bash
# Usage: prune_logs.sh [-n] DIR [DAYS] [KEEP]
#   -n   dry run: only print what would be deleted
set -euo pipefail

dry=0
if [[ "${1:-}" == "-n" ]]; then dry=1; shift; fi
dir=${1:?usage: prune_logs.sh [-n] DIR [DAYS] [KEEP]}
days=${2:-30}
keep=${3:-10}

[[ -d "$dir" ]] || { echo "not a directory: $dir" >&2; exit 1; }

# Newest-first list of log files (NUL separated to survive odd names).
mapfile -d '' files < <(find "$dir" -maxdepth 1 -type f \( -name '*.log' -o -name '*.log.gz' \) \
    -printf '%T@\t%p\0' | sort -z -rn | cut -z -f2-)

cutoff=$(date -d "-${days} days" +%s)
i=0
for f in "${files[@]}"; do
    i=$((i + 1))
    (( i <= keep )) && continue
    mtime=$(stat -c %Y -- "$f")
    (( mtime < cutoff )) || continue
    if (( dry )); then
        echo "would delete: $f"
    else
        rm -f -- "$f" && echo "deleted: $f"
    fi
done
