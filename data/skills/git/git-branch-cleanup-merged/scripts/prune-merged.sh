#!/usr/bin/env bash
# prune-merged.sh <base-branch> [--apply]
# Lists local branches fully merged into <base-branch>; deletes them with --apply.
set -euo pipefail
base="${1:-main}"
apply="${2:-}"
protected_re='^(main|master|develop|release/.*)$'
current="$(git symbolic-ref --quiet --short HEAD || true)"
log=/tmp/deleted-branches.txt

git rev-parse --verify --quiet "$base" >/dev/null || { echo "no such branch: $base" >&2; exit 2; }

git for-each-ref --format='%(refname:short) %(objectname:short)' --merged "$base" refs/heads/ |
while read -r branch sha; do
  if [[ "$branch" == "$base" || "$branch" == "$current" || "$branch" =~ $protected_re ]]; then
    continue
  fi
  if [[ "$apply" == "--apply" ]]; then
    git branch -d "$branch" >/dev/null
    printf '%s %s\n' "$branch" "$sha" >> "$log"
    echo "deleted $branch ($sha)"
  else
    echo "would delete $branch ($sha)"
  fi
done
