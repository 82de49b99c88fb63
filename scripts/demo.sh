#!/usr/bin/env bash
# Install the Python side, then serve the dashboard at once over the demo workspace (no API key
# needed). The demo workspace is built behind the server, its progress on the Overview; that
# background build also sets Docker up when it can (as root: docker.io, dockerd, the local base
# image) so the demo can synthesize and verify tasks; without it every other page still works.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
exec "${WORKBENCH_VENV:-.venv}/bin/workbench" app --demo --setup-docker --workspace "${WORKBENCH_HOME:-data/workspace}" "$@"
