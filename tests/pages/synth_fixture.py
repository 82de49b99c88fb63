"""A finished synthesis run with three verified tasks, written through the real store
functions and real bundles, for the Synthesis and Tasks page tests (AppTest and browser).

Four sampled paths of the graph workspace: one task accepted, one rejected at the oracle
check, one rejected by the rubric judge, and one path whose synthesis failed. Funnel:
sampled 4 → synthesized 3 → built 3 → no-op ok 3 → oracle ok 2 → red-team ok 2 (not run) → rubric ok 1 → decontam ok 1 →
judge ok 1 (an offline task is not judged) → accepted 1.
"""
from __future__ import annotations

from dataclasses import dataclass

from pipeline.verify.rubric import check_rubric
from workbench.models import CheckResult, TaskRecord
from workbench.sandbox.bundle import TaskBundle, write_bundle
from workbench.sandbox.task_toml import TaskMetadata, TaskToml, render
from workbench.store import graph as graph_store
from workbench.store import tasks as store
from tests.helpers import judged

RUN_ID = "synth-fixture01"
FUNNEL = {"sampled": 4, "synthesized": 3, "built": 3, "noop": 3, "oracle": 2, "redteam": 2, "rubric": 1, "decontam": 1,
          "judge": 1, "accepted": 1}
ORACLE_FAILURE = "assert 41 == 42: the count in /app/out.txt is off by one"
SENTENCE_MD = "Count the lines of `/app/server.log` that contain `ERROR` and write the number to `/app/out.txt`."
SENTENCE = SENTENCE_MD.replace("`", "")  # what the tests' docstrings say: the rubric maps them to it


@dataclass
class FixtureTask:
    task_id: str
    name: str
    path_id: str
    skill_ids: list[str]
    skill_names: list[str]
    n_steps: int
    category: str
    verdict: str
    files: dict[str, str]


def _bundle(name: str, category: str, skill_ids: list[str], path_id: str, marker: str) -> dict[str, str]:
    toml = render(TaskToml(name=name, description=f"Count the error lines ({marker})",
                           metadata=TaskMetadata(category=category, skill_ids=skill_ids, path_id=path_id,
                                                 recipes=["log-analysis", "text-file"])))
    return {
        "instruction.md": f"# Count the errors ({marker})\n\n{SENTENCE_MD}\n",
        "task.toml": toml,
        "environment/Dockerfile": "FROM workbench-base:latest\nCOPY app/ /app/\nWORKDIR /app\nSTOPSIGNAL SIGKILL\n",
        "environment/app/server.log": "".join(f"2026-01-01 12:00:{i:02d} {'ERROR' if i % 3 == 0 else 'INFO'} "
                                              f"request {i}\n" for i in range(60)),
        "solution/solve.sh": "#!/bin/bash\nset -euo pipefail\ngrep -c ERROR /app/server.log > /app/out.txt\n",
        "tests/test.sh": "#!/bin/bash\ncd /tests && python3 -m pytest -q test_outputs.py "
                         "&& echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n",
        "tests/test_outputs.py": f"from pathlib import Path\n\n\ndef test_out_exists():\n    \"\"\"{SENTENCE}\"\"\"\n"
                                 "    assert Path('/app/out.txt').exists()\n\n\ndef test_count():\n"
                                 f"    \"\"\"{SENTENCE}\"\"\"\n"
                                 "    assert Path('/app/out.txt').read_text().strip() == '20'\n",
    }


def _tests(outcome_count: str, outcome_exists: str, message: str = "") -> dict:
    return {"tests": [{"name": "test_outputs.py::test_out_exists", "outcome": outcome_exists, "message": ""},
                      {"name": "test_outputs.py::test_count", "outcome": outcome_count, "message": message}],
            "reward": 1.0 if outcome_count == outcome_exists == "passed" else 0.0, "exit_code": 0}


def _checks(kind: str, files: dict[str, str]) -> list[CheckResult]:
    build = CheckResult(name="build", passed=True, reason="image built", seconds=3.2,
                        log="Step 1/4 : FROM workbench-base:latest\nSuccessfully built 0123abcd\n",
                        details={"image": "wb-task-0123abcd"})
    noop = CheckResult(name="noop", passed=True, reason="tests fail on the initial state", seconds=1.4,
                       log="F\n2 failed in 0.05s\n", details=_tests("failed", "failed", "out.txt missing"))
    if kind == "oracle-fails":
        oracle = CheckResult(name="oracle", passed=False, reason=ORACLE_FAILURE, seconds=1.9,
                             log="NOISY-ORACLE-LOG\n.F\n1 failed, 1 passed in 0.06s\n",
                             details=_tests("failed", "passed", "assert '41' == '42'"))
        return [build, noop, oracle]
    oracle = CheckResult(name="oracle", passed=True, reason="tests pass after the solution", seconds=1.7,
                         log="..\n2 passed in 0.04s\n", details=_tests("passed", "passed"))
    if kind == "rubric-fails":
        rubric = CheckResult(name="rubric", passed=False, reason="the instruction does not name the output file",
                             seconds=0.1, log="rubric: 1 problem",
                             details={"problems": ["instruction never mentions /app/out.txt"]})
        return [build, noop, oracle, rubric]
    rubric = check_rubric(TaskBundle(files))  # the real check's details
    assert rubric.passed, rubric.log
    decontam = CheckResult(name="decontam", passed=True, reason="no 14-gram overlap", seconds=0.2,
                           details={"matches": []})
    return [build, noop, oracle, rubric, decontam]


def make_synth_fixture(ws) -> list[FixtureTask]:
    """Write the run, its paths, three tasks with bundles and their checks into ``ws`` (which
    must hold a graph with sampled paths)."""
    batch_id = graph_store.sample_batches(ws.db)["batch_id"].iloc[0]
    steps = graph_store.path_steps(ws.db, batch_id)
    lengths = steps.groupby("path_id")["step"].count()
    # paths of different lengths, so that the path-length filter separates them
    by_len = lengths.reset_index().drop_duplicates("step").sort_values("step")
    assert len(by_len) >= 2, "the sample needs paths of two lengths at least"
    picks = [by_len.iloc[0]["path_id"], by_len.iloc[-1]["path_id"]]
    picks += [p for p in lengths.index if p not in picks][:2]
    store.create_run(ws.db, RUN_ID, "random-walk", 4, 7, "offline", 2, None)
    store.attach_paths(ws.db, RUN_ID, batch_id, picks)
    plan = [("accepted", "log-analysis", "accepted"), ("oracle-fails", "log-analysis", "rejected"),
            ("rubric-fails", "text-processing", "rejected")]
    out = []
    for i, (kind, category, verdict) in enumerate(plan):
        path_id = picks[i]
        path = steps[steps["path_id"] == path_id].sort_values("step")
        skill_ids, names = path["skill_id"].tolist(), path["skill_name"].tolist()
        task_id = f"fixturetask{i:02d}"
        name = f"skillgraph/count-errors-{i}"
        files = _bundle(name, category, skill_ids, path_id, f"marker-{i}")
        bundle_dir = f"tasks/{task_id}"
        bundle = TaskBundle(files)
        write_bundle(bundle, ws.root / bundle_dir)
        store.save_task(ws.db, TaskRecord(task_id=task_id, name=name, path_id=path_id, category=category,
                                          difficulty="easy" if i else "medium", n_steps=len(path),
                                          recipes=["log-analysis", "text-file"], skill_ids=skill_ids,
                                          scenario_ids=path["src_anchor"].tolist(), bundle_dir=bundle_dir,
                                          bundle_hash=bundle.content_hash()))
        store.set_path_stage(ws.db, RUN_ID, path_id, "synthesized", task_id)
        checks = _checks(kind, files)
        assert store.save_verification(ws.db, task_id, checks, "wb-task-0123abcd", RUN_ID, path_id,
                                       **judged(checks)) == verdict
        out.append(FixtureTask(task_id, name, path_id, skill_ids, names, len(path), category, verdict, files))
    store.set_path_stage(ws.db, RUN_ID, picks[3], "failed", error="recipe 'git' found no repository to work on")
    store.set_run_status(ws.db, RUN_ID, "finished", "3 tasks synthesized, 1 accepted")
    assert store.funnel_counts(ws.db, RUN_ID) == FUNNEL
    return out


CANCELLED_RUN_ID = "synth-cancelled01"


def add_cancelled_run(ws, made: list[FixtureTask]) -> FixtureTask:
    """A later run, cancelled after synthesizing one task and before verifying it: the task
    stays pending in the store, with no image and no checks (the clutter a cancel leaves)."""
    src = made[0]
    batch_id = graph_store.sample_batches(ws.db)["batch_id"].iloc[0]
    store.create_run(ws.db, CANCELLED_RUN_ID, "inverse-frequency", 1, 8, "offline", 2, None)
    store.attach_paths(ws.db, CANCELLED_RUN_ID, batch_id, [src.path_id])
    task_id, name = "fixturetask99", "skillgraph/count-errors-cancelled"
    files = _bundle(name, src.category, src.skill_ids, src.path_id, "marker-99")
    bundle = TaskBundle(files)
    write_bundle(bundle, ws.root / "tasks" / task_id)
    store.save_task(ws.db, TaskRecord(task_id=task_id, name=name, path_id=src.path_id, category=src.category,
                                      difficulty="easy", n_steps=src.n_steps, recipes=["log-analysis", "text-file"],
                                      skill_ids=src.skill_ids, scenario_ids=[], bundle_dir=f"tasks/{task_id}",
                                      bundle_hash=bundle.content_hash()))
    store.set_path_stage(ws.db, CANCELLED_RUN_ID, src.path_id, "synthesized", task_id)
    store.set_run_status(ws.db, CANCELLED_RUN_ID, "cancelled", "0 accepted, 0 rejected, 0 failed (stopped)")
    return FixtureTask(task_id, name, src.path_id, src.skill_ids, src.skill_names, src.n_steps, src.category,
                       "pending", files)
