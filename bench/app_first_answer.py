"""Time from `workbench app --demo` to the dashboard's first answer on an empty workspace
(issue 10 item 12: ≤ 30 s after the install), next to the old way measured in the same run:
the demo workspace built in the foreground (`workbench demo`), then the server started.

Both start on fresh workspaces; "answers" means `/_stcore/health` returns 200 and the
page's HTML is served. The new build's own duration (until its status file says it ended)
is printed too. Without `--docker`, DOCKER_HOST points at no engine, so neither side
synthesizes tasks (the build's longest part, minutes, when Docker is there).
Last line: ``RESULT first_answer_s=… baseline_first_answer_s=… speedup=… build_s=…``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.app_process import App  # noqa: E402
from workbench.demo_status import read_status  # noqa: E402

CLI = [sys.executable, "-m", "workbench.cli"]


def _stop(app: App) -> None:
    os.kill(app.proc.pid, signal.SIGTERM)
    try:
        app.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        app.cleanup()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docker", action="store_true", help="let both sides synthesize the demo's tasks in Docker")
    ap.add_argument("--quick", action="store_true", help="smoke run: the same run (the demo corpus has no size to shrink)")
    opts = ap.parse_args()
    env = dict(os.environ)
    if not opts.docker:
        env["DOCKER_HOST"] = "unix:///nonexistent/docker.sock"
    tmp = Path(tempfile.mkdtemp(prefix="app-first-answer-"))
    try:
        new_ws = tmp / "new"
        app = App(tmp, "--workspace", str(new_ws), "app", "--demo", env=env)
        first = app.wait_answering(limit_s=1800)
        print(f"app --demo: first answer after {first:.1f} s", flush=True)
        while (s := read_status(new_ws)) is None or s.running:
            time.sleep(0.5)
        build_s = time.monotonic() - app.started
        print(f"  its background build ended ({s.state}) after {build_s:.1f} s", flush=True)
        _stop(app)

        old_ws = tmp / "old"
        t0 = time.monotonic()
        subprocess.run([*CLI, "--workspace", str(old_ws), "demo"], env=env, check=True, capture_output=True)
        app = App(tmp, "--workspace", str(old_ws), "app", env=env)
        baseline = app.wait_answering(limit_s=1800) + (app.started - t0)
        print(f"baseline (demo in the foreground, then app): first answer after {baseline:.1f} s", flush=True)
        _stop(app)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"RESULT first_answer_s={first:.1f} baseline_first_answer_s={baseline:.1f} "
          f"speedup={baseline / first:.1f} build_s={build_s:.1f}")


if __name__ == "__main__":
    main()
