#!/usr/bin/env bash
# Install everything (system packages, Python packages) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-system.sh
scripts/setup-python.sh dev
exec .venv/bin/python -m pytest "$@"
