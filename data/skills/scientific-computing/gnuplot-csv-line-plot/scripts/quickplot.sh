#!/usr/bin/env bash
# Quick PNG line plot of one or more CSV columns against column 1 (header row skipped).
# Usage: quickplot.sh data.csv out.png "2 3" ["y label"]
set -euo pipefail
csv="${1:?csv file}"; out="${2:?output png}"; cols="${3:-2}"; ylabel="${4:-value}"

header=$(head -n 1 "$csv")
plot=""
for c in $cols; do
  title=$(printf '%s\n' "$header" | cut -d, -f"$c")
  plot+="${plot:+, }'$csv' using 1:$c skip 1 with lines lw 2 title '$title'"
done

gnuplot <<GP
set datafile separator ','
set terminal pngcairo size 1200,600 enhanced font 'DejaVu Sans,11'
set output '$out'
set grid
set key top left
set xlabel '$(printf '%s\n' "$header" | cut -d, -f1)'
set ylabel '$ylabel'
plot $plot
GP
echo "wrote $out"
