#!/usr/bin/env bash
# System packages and services the test suite needs: Debian's chromium for the browser
# tests; Docker (Debian's docker.io, engine started here when none runs) and debootstrap
# for the sandbox and its locally built base image.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "missing system packages: ${need[*]} (run as root or: sudo apt-get install ${need[*]})" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
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
