#!/usr/bin/env bash
# Install everything and serve the dashboard over the demo workspace (no API key, no Docker).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
exec .venv/bin/workbench app --demo --workspace "${WORKBENCH_HOME:-data/workspace}" "$@"
