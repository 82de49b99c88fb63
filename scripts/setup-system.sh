#!/usr/bin/env bash
# System packages the test suite needs besides Docker: Debian's chromium for the browser
# tests; patchelf, which points the verifier's toolchain at its own loader and libraries
# (workbench/sandbox/toolchain.py). (Docker is scripts/setup-docker.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/apt-install.sh chromium:chromium patchelf:patchelf
