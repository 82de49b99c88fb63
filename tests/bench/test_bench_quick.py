"""Every benchmark in bench/ runs in its `--quick` mode and prints its RESULT line (issue 22
item 3: a bench that no longer runs — a renamed page, a moved function — fails here instead of
rotting unseen). No thresholds: the figures of a smoke run on a shared machine mean nothing;
what is checked is that the bench's whole code path still runs to its last line.

Each bench runs in its own process from the repository root, as its README says, with no LLM
endpoint or key in the environment (the benches that talk to a model use the project's replay
server). Those that need a Docker engine carry the suite's `docker` marker."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"

# Modules of bench/ that are not benchmarks of their own (imported by one).
HELPER_MODULES = {"rollout_harbor_side.py"}

# Benches that drive containers (directly or through Harbor or Ray's worker nodes).
NEEDS_DOCKER = {"disk_poll.py", "terminal_turn.py", "test_phase_prelude.py", "verify_throughput.py",
                "rollout_throughput.py", "llm_synth.py", "ray_scaling.py", "sealed_tests.py",
                "real_model_e2e.py", "red_team.py"}

# Benches another issue's work owns: run when they have a --quick mode, skipped (saying whose) until then.
OWNED_ELSEWHERE = {"curation_labels.py": "issue 25", "sealed_tests.py": "issue 27", "real_model_e2e.py": "issue 26"}

RESULT = re.compile(r"^RESULT \w[\w.]*=\S")   # values may hold spaces (a JSON object)
LLM_ENV = ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "WORKBENCH_LLM_API_KEY", "OPENAI_API_KEY",
           "OPENAI_BASE_URL")


def _benches() -> list:
    names = sorted({p.name for p in BENCH.glob("*.py")} - HELPER_MODULES | set(OWNED_ELSEWHERE))
    params = []
    for name in names:
        marks = [pytest.mark.slow]
        if name in NEEDS_DOCKER:
            marks += [pytest.mark.docker, pytest.mark.timeout(1200)]
        params.append(pytest.param(name, marks=marks, id=name.removesuffix(".py")))
    return params


def run_quick(name: str, timeout_s: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in LLM_ENV}
    return subprocess.run([sys.executable, str(BENCH / name), "--quick"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout_s)


def result_line(stdout: str) -> str | None:
    """The bench's last non-empty stdout line when it is a RESULT line (the format bench/README.md
    promises: `RESULT name=value …`), else None."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    return lines[-1] if lines and RESULT.match(lines[-1]) else None


@pytest.mark.parametrize("name", _benches())
def test_bench_quick_prints_its_result_line(name):
    path = BENCH / name
    if name in OWNED_ELSEWHERE:
        if not path.exists():
            pytest.skip(f"bench/{name} is not written yet ({OWNED_ELSEWHERE[name]} owns it)")
        if "--quick" not in path.read_text():
            pytest.skip(f"bench/{name} has no --quick mode yet ({OWNED_ELSEWHERE[name]} owns it)")
    proc = run_quick(name, timeout_s=1100 if name in NEEDS_DOCKER else 500)
    tail = f"\n--- stdout (end) ---\n{proc.stdout[-3000:]}\n--- stderr (end) ---\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, f"bench/{name} --quick exited {proc.returncode}{tail}"
    assert result_line(proc.stdout), f"bench/{name} --quick printed no RESULT line last{tail}"


def test_every_bench_is_a_bench_or_a_named_helper():
    """A new bench/*.py is collected above; a helper module must be named here, and the names
    listed here must still exist (a rename would otherwise drop a bench from the check)."""
    present = {p.name for p in BENCH.glob("*.py")}
    assert HELPER_MODULES <= present, HELPER_MODULES - present
    assert NEEDS_DOCKER - set(OWNED_ELSEWHERE) <= present, NEEDS_DOCKER - set(OWNED_ELSEWHERE) - present
    for helper in HELPER_MODULES:
        assert '__name__ == "__main__"' not in (BENCH / helper).read_text(), f"{helper} runs as a bench: list it"


def test_result_line_reads_only_a_last_result_line():
    assert result_line("warm-up\nRESULT a=1 b=x_2\n") == "RESULT a=1 b=x_2"
    assert result_line("RESULT a=1\nTraceback: FileNotFoundError\n") is None
    assert result_line('RESULT calls=3 ended={"ok": 3}') == 'RESULT calls=3 ended={"ok": 3}'
    assert result_line("RESULT\n") is None
    assert result_line("") is None


def test_page_speed_times_every_page_of_the_dashboard():
    """bench/page_speed.py reads its pages from the app's navigation: every pages/*.py that is a
    page (not a helper module) is timed, the Rollouts group included."""
    sys.path.insert(0, str(BENCH))
    try:
        import page_speed
    finally:
        sys.path.remove(str(BENCH))
    helpers = {"__init__", "shared", "cached", "preload"}
    pages = {p.stem for p in (REPO / "pages").glob("*.py")} - helpers
    assert set(page_speed.PAGES) == pages
    assert {"rollouts", "failures", "difficulty", "evolution", "path_coverage"} <= set(page_speed.PAGES)
