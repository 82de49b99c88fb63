#!/usr/bin/env bash
# What a newcomer runs, on installs without the dev extras (issue 22): in a fresh virtualenv, the
# plain install, then the ray extra added; `workbench --help` and every subcommand's --help; then the
# README's first command (scripts/demo.sh) until the dashboard answers, and every page and tab
# fetched once in headless Chromium while the demo build runs behind it. Exits non-zero on any
# failure. Needs the dev install (.venv) only for playwright, which drives Chromium from outside.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d /tmp/newcomer-smoke.XXXXXX)"
app=""
cleanup() { [ -n "$app" ] && kill -- "-$app" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
say() { echo "newcomer-smoke: $*"; }
answers() { .venv/bin/python -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)" "$1" 2>/dev/null; }
t_all=$SECONDS

every_help() {   # $1 venv: `workbench --help` and every subcommand's, through main() in one process
  "$1/bin/python" - <<'PY'
import argparse, contextlib, io, sys
from workbench.cli import build_parser, main

def walk(parser, prefix):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prefix + [name]
                yield from walk(sub, prefix + [name])

paths = [[], *walk(build_parser(), [])]
for path in paths:
    text = io.StringIO()
    try:
        with contextlib.redirect_stdout(text):
            main([*path, "--help"])
        code = 0
    except SystemExit as exc:
        code = exc.code
    if code not in (0, None) or "usage:" not in text.getvalue():
        sys.exit(f"'workbench {' '.join(path)} --help' failed (exit {code}): {text.getvalue()[-500:]}")
if len(paths) < 10:
    sys.exit(f"only {len(paths)} commands found")
print(len(paths))
PY
}

serve_and_walk() {     # $1 venv, $2 label: the README's first command, then every page in Chromium
  local venv="$1" label="$2" port
  port="$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  WORKBENCH_VENV="$venv" WORKBENCH_HOME="$work/ws-$label" setsid scripts/demo.sh --port "$port" \
    > "$work/app-$label.log" 2>&1 &
  app=$!
  for _ in $(seq 180); do
    answers "http://127.0.0.1:$port/_stcore/health" && break
    kill -0 "$app" 2>/dev/null || { cat "$work/app-$label.log"; say "$label: the dashboard died"; exit 1; }
    sleep 1
  done
  answers "http://127.0.0.1:$port/_stcore/health" || { cat "$work/app-$label.log"; say "$label: no answer"; exit 1; }
  say "$label: dashboard answers on port $port after $((SECONDS - t0)) s; fetching every page"
  .venv/bin/python scripts/newcomer_pages.py "http://127.0.0.1:$port" || { tail -50 "$work/app-$label.log"; exit 1; }
  if grep -n "Traceback" "$work/app-$label.log"; then tail -60 "$work/app-$label.log"; say "$label: the server logged a traceback"; exit 1; fi
  kill -- "-$app" 2>/dev/null || true
  wait "$app" 2>/dev/null || true
  app=""
}

venv="$work/venv"
for extras in "" ray; do
  label="${extras:-base}"
  t0=$SECONDS
  WORKBENCH_VENV="$venv" scripts/setup-python.sh $extras
  say "$label: installed in $((SECONDS - t0)) s"
  n="$(every_help "$venv")"
  say "$label: workbench --help and every subcommand's ($n commands) ok"
  serve_and_walk "$venv" "$label"
  say "$label: done in $((SECONDS - t0)) s"
done
say "all done in $((SECONDS - t_all)) s"
