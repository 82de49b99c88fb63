#!/usr/bin/env bash
# missing-libs.sh FILE...  -> prints "<lib> => not found" for each unresolved dependency
set -euo pipefail
[ "$#" -ge 1 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
rc=0
for f in "$@"; do
  if [ "$(head -c 4 "$f" 2>/dev/null | tail -c 3)" != "ELF" ]; then
    echo "$f: not an ELF file" >&2
    rc=2
    continue
  fi
  missing=$(ldd "$f" 2>/dev/null | awk '/not found/ {print $1}' | sort -u)
  if [ -n "$missing" ]; then
    while read -r lib; do
      printf '%s => not found (needed by %s)\n' "$lib" "$f"
    done <<< "$missing"
    rc=1
  fi
done
exit "$rc"
