#!/usr/bin/env bash
# System packages the test suite needs besides the sandbox: Debian's chromium for the
# browser tests. (Docker, debootstrap and patchelf are scripts/setup-docker.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/apt-install.sh chromium:chromium
