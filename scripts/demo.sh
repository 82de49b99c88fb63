#!/usr/bin/env bash
# Install everything and serve the dashboard over the demo workspace (no API key needed).
# Docker is set up when possible (as root: docker.io, dockerd, the local base image) so the
# demo can synthesize and verify tasks; without it every other page still works.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
scripts/setup-docker.sh || echo "warning: no Docker sandbox (see above); synthesis will say what is missing" >&2
exec .venv/bin/workbench app --demo --workspace "${WORKBENCH_HOME:-data/workspace}" "$@"
