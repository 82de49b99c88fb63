#!/usr/bin/env bash
# Usage: bench.sh SAMPLE_FILE   -> TSV on stdout
set -euo pipefail
src=${1:?usage: bench.sh SAMPLE_FILE}
orig=$(stat -c %s -- "$src")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

printf 'tool\tlevel\tratio\tcomp_s\tdecomp_s\n'
run() {  # tool level compress-cmd decompress-cmd
    local tool=$1 level=$2 ccmd=$3 dcmd=$4 t0 t1 t2 size
    t0=$(now)
    $ccmd < "$src" > "$tmp/out"
    t1=$(now)
    $dcmd < "$tmp/out" > "$tmp/back"
    t2=$(now)
    cmp -s "$src" "$tmp/back" || { echo "round-trip FAILED for $tool $level" >&2; return 1; }
    size=$(stat -c %s "$tmp/out")
    awk -v t="$tool" -v l="$level" -v o="$orig" -v s="$size" -v a="$t0" -v b="$t1" -v c="$t2" \
        'BEGIN { printf "%s\t%s\t%.2f\t%.1f\t%.1f\n", t, l, o / s, b - a, c - b }'
}

for l in 1 6 9;  do run gzip  "$l" "gzip -$l"  "gzip -d";  done
for l in 9;      do run bzip2 "$l" "bzip2 -$l" "bzip2 -d"; done
for l in 1 6 9;  do run xz    "$l" "xz -$l"    "xz -d";    done
for l in 1 3 9 19; do run zstd "$l" "zstd -q -$l" "zstd -q -d"; done
