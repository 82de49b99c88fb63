"""The scripted end-to-end suite: `run_synth(provider="llm")` as the CLI runs it (the real client
over HTTP against the replay server, WORKBENCH_LLM_BASE_URL in the environment; real Docker
builds, Sessions and verification) on 13 demo paths, one per repair route of issue 13 and a
clean one. Every route is repaired by rewriting only its artifact, with each attempt stored;
one path exhausts its repairs and is rejected with the reason; accepted tasks reflect their
path's skills and their tests catch a solution that does nothing useful; a stopped batch
resumes from the cached replies."""
from __future__ import annotations

import os
import re
import shutil
import threading
from types import SimpleNamespace

import pytest

from pipeline.repair.attempts import MAX_TASK_REPAIRS
from pipeline.synth.batch import run_synth
from pipeline.synth.llm.scripted import FAULTS, ScriptedSynthesis
from pipeline.synth.providers import SOLVE_TIMEOUT_ENV
from tests.pipeline.synth.llm.demo_paths import batch_of, tool_paths
from workbench.llm.replay_server import ReplayServer
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import TaskBundle, read_bundle
from workbench.sandbox.task_toml import parse as parse_toml
from workbench.store import repairs
from workbench.store import tasks as store
from workbench.workspace import Workspace

pytestmark = pytest.mark.docker

# The check whose failure asks for each route's repair (a guard's name starts "guard.").
CHECK_OF = {"broken_dockerfile": ("build",), "registry_pull": ("guard.",), "crashing_solution": ("solve", "oracle"),
            "never_ends": ("solve", "oracle", "guard."), "invalid_json": ("guard.reply",), "test_bug": ("oracle",),
            "passes_untouched": ("noop",), "bad_imports": ("guard.",), "leaking_instruction": ("rubric",),
            "missing_file": ("guard.",), "judge_flags": ("judge",), "exhaust": ("oracle",)}
N_MAIN = len(FAULTS) + 1          # one path per fault and a clean one
N_RESUME = 3


def _start(ws: Workspace, run_id: str, pids: list[str]) -> None:
    """A run over exactly these paths (run_synth then finds its paths and samples none)."""
    store.create_run(ws.db, run_id, "random-walk", len(pids), 0, "llm", 3, os.getpid())
    store.attach_paths(ws.db, run_id, batch_of(pids[0]), pids)


@pytest.fixture(scope="module")
def batch(graph_workspace_template, tmp_path_factory):
    root = tmp_path_factory.mktemp("scripted-batch") / "ws"
    shutil.copytree(graph_workspace_template, root)
    ws = Workspace.open(root)
    contexts = tool_paths(ws, N_MAIN + N_RESUME)
    pids = list(contexts)
    main, rest = pids[:N_MAIN], pids[N_MAIN:]
    faults = dict(zip(main, FAULTS))
    scripted = ScriptedSynthesis(ws, faults, base_image=base_image_name())
    srv = ReplayServer(latency_s=0.05).start()
    srv.add_rule(scripted.rule())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBENCH_LLM_BASE_URL", srv.base_url)
        mp.setenv(SOLVE_TIMEOUT_ENV, "30")      # never_ends costs this, in the Session or the oracle
        _start(ws, "e2e-main", main)
        report = run_synth(ws, run_id="e2e-main", provider="llm", concurrency=3)
        yield SimpleNamespace(ws=ws, report=report, faults=faults, scripted=scripted, srv=srv, main=main,
                              rest=rest, contexts=contexts, mp=mp)
    srv.stop()


def _task_of(b, pid: str):
    frame = store.tasks_frame(b.ws.db)
    rows = frame[(frame.path_id == pid) & (frame.run_id == "e2e-main")]
    return rows.iloc[0] if len(rows) else None


def _run_error(ws: Workspace, run_id: str, pid: str) -> str | None:
    """What the run kept about the path: why it gave no task, or why its task was rejected."""
    with ws.db.read() as con:
        row = con.execute("SELECT error FROM run_tasks WHERE run_id = ? AND path_id = ?", [run_id, pid]).fetchone()
    return row[0] if row else None


def _bundle(b, row) -> TaskBundle:
    return read_bundle(b.ws.root / row["bundle_dir"])


def _why(b, pid):
    row = _task_of(b, pid)
    if row is None:
        return f"no task: {_run_error(b.ws, 'e2e-main', pid)}"
    checks = store.checks_for(b.ws.db, row["task_id"])
    return (row["verdict"], row["reason"], repairs.attempts_for(b.ws.db, row["task_id"])[
        ["artifact", "check_name", "reason", "outcome"]].to_dict("records"),
        checks[~checks.passed][["check_name", "reason"]].to_dict("records"))


def test_the_batch_finishes_with_every_path_accounted_for(batch):
    r = batch.report
    assert r.status == "finished" and r.provider == "llm", r.as_dict()
    assert r.sampled == N_MAIN and r.verified + r.failed == N_MAIN
    assert r.accepted == N_MAIN - 1, {pid: _why(batch, pid) for pid in batch.main
                                      if (row := _task_of(batch, pid)) is None or row["verdict"] != "accepted"}
    assert r.timings["llm_s"] > 0 and r.timings["docker_s"] > 0


@pytest.mark.parametrize("fault", [f for f in FAULTS if f != "exhaust"])
def test_each_route_is_repaired_by_rewriting_only_its_artifact(batch, fault):
    pid = next(p for p, f in batch.faults.items() if f == fault)
    row = _task_of(batch, pid)
    assert row is not None and row["verdict"] == "accepted", _why(batch, pid)
    attempts = repairs.attempts_for(batch.ws.db, row["task_id"])
    assert len(attempts) == 1, attempts.to_dict("records")          # the repair reply is right at once
    a = attempts.iloc[0]
    assert a["artifact"] == FAULTS[fault], a.to_dict()               # only the faulty artifact rewritten
    assert a["check_name"].startswith(CHECK_OF[fault]), a.to_dict()
    assert a["reason"] and a["diff"].startswith("---") and a["outcome"] == "fixed"
    assert int(row["repairs"]) == 1
    calls = batch.scripted.calls_for(pid)
    assert calls.get(f"synth_repair_{FAULTS[fault]}") == 1
    others = {s for s in calls if s.startswith("synth_repair_")} - {f"synth_repair_{FAULTS[fault]}"}
    assert not others, calls


def test_the_clean_path_is_built_right_the_first_time(batch):
    pid = next(p for p in batch.main if p not in batch.faults)
    row = _task_of(batch, pid)
    assert row is not None and row["verdict"] == "accepted", _why(batch, pid)
    assert repairs.attempts_for(batch.ws.db, row["task_id"]).empty
    checks = store.checks_for(batch.ws.db, row["task_id"])
    assert set(checks.check_name) >= {"build", "noop", "oracle", "rubric", "decontam", "judge"}
    assert checks.passed.all()


def test_the_path_that_exhausts_its_repairs_is_rejected_with_the_reason(batch):
    pid = next(p for p, f in batch.faults.items() if f == "exhaust")
    row = _task_of(batch, pid)
    assert row is not None and row["verdict"] == "rejected", _why(batch, pid)
    attempts = repairs.attempts_for(batch.ws.db, row["task_id"])
    assert len(attempts) == MAX_TASK_REPAIRS and set(attempts.artifact) == {"tests"}
    assert all(d.startswith("---") for d in attempts["diff"])        # each repair changed the tests
    assert attempts.iloc[-1]["outcome"] == "exhausted"
    assert row["failed_check"] == "oracle"
    assert "tests still fail" in row["reason"]
    error = _run_error(batch.ws, "e2e-main", pid) or ""         # the exhausted repairs, beside the checks
    assert "tests" in error and f"{MAX_TASK_REPAIRS} of {MAX_TASK_REPAIRS}" in error, error


def test_accepted_tasks_reflect_the_skills_of_their_path(batch):
    for pid in batch.main:
        row = _task_of(batch, pid)
        if row is None or row["verdict"] != "accepted":
            continue
        bundle = _bundle(batch, row)
        meta = parse_toml(bundle.text("task.toml")).metadata
        ctx = batch.contexts[pid]
        assert meta.provider == "llm" and meta.path_id == pid
        assert [f.skill_name for f in meta.skill_fidelity] == [sc.step.skill_name for sc in ctx.steps]
        for f, sc in zip(meta.skill_fidelity, ctx.steps):
            assert f.fidelity == "tool" and set(f.tools_used) <= set(sc.step.parts.evidence_tools), (pid, f)
            assert f.tools_used, (pid, f)
        instruction = bundle.text("instruction.md")
        for sc in ctx.steps:
            assert sc.step.skill_name in instruction, (pid, sc.step.skill_name)


def test_accepted_tasks_tests_catch_a_solution_that_does_nothing_useful(batch):
    """solve.sh makes each file the tests read, empty: the oracle must fail."""
    from pipeline.verify.docker_checks import check_oracle
    from workbench.sandbox.engine import Engine
    engine = Engine()
    checked = 0
    for pid in batch.main:
        row = _task_of(batch, pid)
        if row is None or row["verdict"] != "accepted":
            continue
        bundle = _bundle(batch, row)
        read = sorted(set(re.findall(r"/app/[A-Za-z0-9_./-]+\.[a-z]+", bundle.text("tests/test_outputs.py"))))
        lazy = "#!/bin/bash\n" + "".join(f"mkdir -p {os.path.dirname(p)} && : > {p}\n" for p in read)
        files = dict(bundle.files, **{"solution/solve.sh": lazy.encode()})
        cfg = parse_toml(bundle.text("task.toml"))
        oracle = check_oracle(engine, row["image"], TaskBundle(files, set(bundle.executables)), cfg)
        assert not oracle.passed and "tests still fail" in oracle.reason, (pid, oracle.reason)
        checked += 1
    assert checked == N_MAIN - 1


def test_a_stopped_batch_resumes_from_the_cached_replies(batch):
    ws, scripted = batch.ws, batch.scripted
    _start(ws, "e2e-resume", batch.rest)
    stop = threading.Event()

    def progress(snapshot: dict) -> None:
        if snapshot["verified"] >= 1:
            stop.set()
    first = run_synth(ws, run_id="e2e-resume", provider="llm", concurrency=2, stop=stop, progress=progress)
    assert first.status == "cancelled"
    frame = store.tasks_frame(ws.db)
    done = [p for p in batch.rest if ((frame.path_id == p) & (frame.run_id == "e2e-resume")).any()]
    assert 1 <= len(done) < N_RESUME, done
    before = {p: scripted.calls_for(p) for p in batch.rest}
    second = run_synth(ws, run_id="e2e-resume", resume=True)
    assert second.status == "finished" and second.accepted == N_RESUME, second.as_dict()
    for p in done:                          # finished paths: not one new request
        assert scripted.calls_for(p) == before[p], p
    with ws.db.read() as con:
        hits = con.execute("SELECT count(*) FROM llm_calls WHERE batch_id = 'e2e-resume' AND cache_hit").fetchone()[0]
    interrupted = [p for p in batch.rest if p not in done and before[p]]
    assert hits >= len(interrupted) > 0 or not interrupted    # their earlier replies came from the cache
