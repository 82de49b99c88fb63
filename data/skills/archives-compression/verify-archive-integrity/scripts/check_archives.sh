#!/usr/bin/env bash
# Usage: check_archives.sh DIR   -- prints OK/BAD per archive, exit 1 if any BAD
set -uo pipefail
dir=${1:?usage: check_archives.sh DIR}
bad=0

check() {
    local f=$1
    case "$f" in
        *.tar.gz|*.tgz)   gzip -t "$f" && tar -tzf "$f" >/dev/null ;;
        *.tar.xz|*.txz)   xz -t "$f" && tar -tJf "$f" >/dev/null ;;
        *.tar.zst)        zstd -qt "$f" && tar --zstd -tf "$f" >/dev/null ;;
        *.tar.bz2|*.tbz2) bzip2 -t "$f" && tar -tjf "$f" >/dev/null ;;
        *.tar)            tar -tf "$f" >/dev/null ;;
        *.gz)             gzip -t "$f" ;;
        *.xz)             xz -t "$f" ;;
        *.zst)            zstd -qt "$f" ;;
        *.bz2)            bzip2 -t "$f" ;;
        *.zip)            unzip -tqq "$f" ;;
        *.7z)             7z t -bso0 -bsp0 "$f" ;;
        *)                return 2 ;;
    esac
}

while IFS= read -r -d '' f; do
    check "$f" 2>/dev/null
    case $? in
        0) echo "OK   $f" ;;
        2) ;;  # not an archive type we know
        *) echo "BAD  $f"; bad=1 ;;
    esac
done < <(find "$dir" -type f -print0 | sort -z)
exit $bad
