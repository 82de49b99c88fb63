#!/usr/bin/env bash
# Install everything (system packages and services, Python packages, the local base image,
# Harbor's own virtualenv) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-system.sh
scripts/setup-python.sh dev
scripts/setup-docker.sh
scripts/setup-harbor.sh
exec .venv/bin/python -m pytest "$@"
