#!/usr/bin/env bash
# Usage: WATCH_DIR=/path/incoming hotfolder.sh 'command args'
set -uo pipefail
dir=${WATCH_DIR:?set WATCH_DIR}
cmd=${1:?usage: hotfolder.sh COMMAND}
done_dir="$dir/../done"; failed_dir="$dir/../failed"
log=/var/tmp/hotfolder.log
mkdir -p "$done_dir" "$failed_dir"

handle() {
    local f=$1 name
    name=$(basename -- "$f")
    case "$name" in .*|*.part|*.tmp) return ;; esac
    [[ -f "$f" ]] || return
    if $cmd "$f" >>"$log" 2>&1; then
        # gzip -k and similar leave extra outputs next to the file; move them too.
        mv -- "$f" "$done_dir/" 2>/dev/null
        for extra in "$f".*; do [[ -e "$extra" ]] && mv -- "$extra" "$done_dir/"; done
        echo "$(date -Is) ok $name" >>"$log"
    else
        mv -- "$f" "$failed_dir/"
        echo "$(date -Is) FAILED $name" >>"$log"
    fi
}

# Catch up on files that arrived while we were not running.
for f in "$dir"/*; do [[ -e "$f" ]] && handle "$f"; done

inotifywait -m -q -e close_write -e moved_to --format '%w%f' "$dir" |
while IFS= read -r path; do
    handle "$path"
done
