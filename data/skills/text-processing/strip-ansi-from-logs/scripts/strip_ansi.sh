#!/usr/bin/env bash
# Usage: strip_ansi.sh [FILE...]  (reads stdin when no file given)
# Removes ANSI CSI/OSC escapes, resolves backspaces and \r redraws.
set -euo pipefail
cat -- "$@" |
  sed -E \
    -e 's/\x1B\][^\x07\x1B]*(\x07|\x1B\\)//g' \
    -e 's/\x1B\[[0-9;?]*[ -\/]*[@-~]//g' \
    -e 's/\x1B[()][0-9A-Za-z]//g' \
    -e 's/\x1B[=>78]//g' |
  awk '{
    # keep the text after the last carriage return (progress bar final state)
    sub(/\r+$/, "")
    n = split($0, parts, "\r")
    line = parts[n]
    # resolve backspaces: "ab\bc" -> "ac"
    while (match(line, /[^\b]\b/)) line = substr(line, 1, RSTART - 1) substr(line, RSTART + 2)
    gsub(/\b/, "", line)
    print line
  }'
