#!/usr/bin/env bash
# Usage: [ZSTD_LEVEL=19] gz2zst.sh [-n] DIR
set -uo pipefail
dry=0; [[ "${1:-}" == "-n" ]] && { dry=1; shift; }
dir=${1:?usage: gz2zst.sh [-n] DIR}
level=${ZSTD_LEVEL:-19}

find "$dir" -type f \( -name '*.gz' -o -name '*.tgz' \) -print0 | sort -z |
while IFS= read -r -d '' gz; do
    case "$gz" in
        *.tgz) out="${gz%.tgz}.tar.zst" ;;
        *)     out="${gz%.gz}.zst" ;;
    esac
    if [[ -e "$out" ]]; then echo "skip (exists): $out"; continue; fi
    if (( dry )); then echo "would convert: $gz -> $out"; continue; fi

    tmp="$out.partial"
    gzip -dc -- "$gz" | zstd -q -T0 -"$level" -o "$tmp"
    st=("${PIPESTATUS[@]}")
    if (( st[0] != 0 || st[1] != 0 )); then
        echo "FAILED (bad gzip or write error): $gz"; rm -f -- "$tmp"; continue
    fi
    h1=$(gzip -dc -- "$gz" | sha256sum | cut -d' ' -f1)
    h2=$(zstd -dc -- "$tmp" 2>/dev/null | sha256sum | cut -d' ' -f1)
    if [[ "$h1" == "$h2" ]]; then
        touch -r "$gz" -- "$tmp" && mv -- "$tmp" "$out" && rm -f -- "$gz"
        printf '%s  %s -> %s\n' "$(stat -c %s "$out")" "$gz" "$out"
    else
        echo "FAILED (checksum mismatch): $gz"; rm -f -- "$tmp"
    fi
done
