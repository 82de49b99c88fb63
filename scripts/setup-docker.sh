#!/usr/bin/env bash
# The sandbox's needs: Debian's docker.io (engine started here when none answers),
# debootstrap, patchelf (points the verifier's read-only toolchain at its own loader and
# libraries: workbench/sandbox/toolchain.py), then the local base image (`workbench images
# bootstrap`: tagged by its recipe's hash, so an unchanged recipe is not built again).
# Needs .venv (setup-python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/apt-install.sh dockerd:docker.io debootstrap:debootstrap patchelf:patchelf
if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "no Docker engine answers; start one (sudo systemctl start docker)" >&2
    exit 1
  fi
  echo "starting dockerd (log: /var/log/workbench-dockerd.log)"
  (setsid dockerd >/var/log/workbench-dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "dockerd did not come up:" >&2; tail -20 /var/log/workbench-dockerd.log >&2; exit 1; }
fi
.venv/bin/workbench images bootstrap
