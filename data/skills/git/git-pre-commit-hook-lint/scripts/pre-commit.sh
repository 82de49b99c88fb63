#!/usr/bin/env bash
# Shared pre-commit hook: lint staged Python files, reject trailing whitespace.
set -u
status=0
files=()
while IFS= read -r -d '' f; do
  files+=("$f")
done < <(git diff --cached --name-only -z --diff-filter=ACM -- '*.py')

if [ "${#files[@]}" -eq 0 ]; then
  exit 0
fi

# Trailing whitespace on added lines of the staged diff.
if git diff --cached --check -- "${files[@]}" >/tmp/precommit-ws.$$ 2>&1; then
  :
else
  echo "pre-commit: trailing whitespace or conflict markers:" >&2
  cat /tmp/precommit-ws.$$ >&2
  status=1
fi
rm -f /tmp/precommit-ws.$$

if command -v flake8 >/dev/null 2>&1; then
  if ! flake8 --max-line-length=100 "${files[@]}"; then
    echo "pre-commit: flake8 reported problems (commit with --no-verify to bypass)" >&2
    status=1
  fi
else
  echo "pre-commit: flake8 not installed, skipping lint" >&2
fi
exit "$status"
