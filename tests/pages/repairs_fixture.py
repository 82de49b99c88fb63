"""A finished LLM synthesis run beside the offline fixture run (tests/pages/synth_fixture.py),
written through the real store functions, bundles and call log, for the Repairs tab and the
"accepted after N repairs" funnel (AppTest and browser).

Three LLM tasks: one accepted after two repairs (the environment, then the tests), one
accepted with none, one rejected after a repair that did not fix it. Their LLM calls are in
llm_calls with item = task id, as the synthesizer's client writes them.
"""
from __future__ import annotations

from dataclasses import dataclass

from pipeline.repair.attempts import RepairAttempt
from tests.pages.synth_fixture import FixtureTask, _bundle, _checks
from tests.helpers import judged
from workbench.llm.call_log import CallLog, CallRecord
from workbench.models import TaskRecord
from workbench.sandbox.bundle import TaskBundle, write_bundle
from workbench.store import repairs
from workbench.store import tasks as store

LLM_RUN_ID = "synth-llm01"
ENV_DIFF = ("--- a/environment/Dockerfile\n+++ b/environment/Dockerfile\n@@ -1,2 +1,2 @@\n"
            "-FROM ubuntu:22.04\n+FROM workbench-base:latest\n COPY app/ /app/\n")
TESTS_DIFF = ("--- a/tests/test_outputs.py\n+++ b/tests/test_outputs.py\n@@ -9 +9 @@\n"
              "-    assert Path('/app/out.txt').read_text().strip() == '21'\n"
              "+    assert Path('/app/out.txt').read_text().strip() == '20'\n")
PULL_DENIED = "the Dockerfile pulls ubuntu:22.04 from a registry; only the local base image exists"
# per stage: calls, prompt and completion tokens, cost of each call
CALLS = {"synth_plan": (1, 1200, 300, 0.0004), "synth_environment": (1, 900, 400, 0.0004),
         "synth_repair_environment": (1, 1500, 200, 0.0004), "synth_repair_tests": (1, 1400, 250, 0.0004),
         "task_judge": (2, 2000, 150, 0.0005)}


@dataclass
class LLMFixture:
    repaired: FixtureTask       # accepted after 2 repairs
    first_time: FixtureTask     # accepted, no repairs
    given_up: FixtureTask       # rejected after 1 repair


def _attempts(kind: str) -> list[dict]:
    env = RepairAttempt(n=1, artifact="environment", check="build", reason=PULL_DENIED, diff=ENV_DIFF,
                        prompt_tokens=1500, completion_tokens=200, cost_usd=0.0004, outcome="moved_on",
                        evidence=["Step 1/3 : FROM ubuntu:22.04", "pull access denied for ubuntu"])
    tests = RepairAttempt(n=2, artifact="tests", check="oracle", reason="test_count expects 21, the solution "
                          "leaves 20", diff=TESTS_DIFF, prompt_tokens=1400, completion_tokens=250, cost_usd=0.0004,
                          outcome="fixed", evidence=["test_outputs.py::test_count"])
    if kind == "repaired":
        return [env.model_dump(), tests.model_dump()]
    if kind == "given_up":
        return [tests.model_copy(update={"n": 1, "outcome": "still_failing"}).model_dump()]
    return []


def _log_calls(ws, task_id: str, stages: list[str]) -> None:
    log = CallLog(ws.db)
    for stage in stages:
        n, pt, ct, cost = CALLS[stage]
        for _ in range(n):
            log.add(CallRecord(stage=stage, item=task_id, provider="openai-compatible", model="gpt-4o-mini",
                               attempt=1, latency_ms=1500.0, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost,
                               batch_id=LLM_RUN_ID))
    log.flush()


def add_llm_run(ws, made: list[FixtureTask]) -> LLMFixture:
    """The LLM run over the paths of the offline fixture's first three tasks."""
    from workbench.store import graph as graph_store
    batch_id = graph_store.sample_batches(ws.db)["batch_id"].iloc[0]
    store.create_run(ws.db, LLM_RUN_ID, "random-walk", 3, 11, "llm", 4, None)
    store.attach_paths(ws.db, LLM_RUN_ID, batch_id, [t.path_id for t in made[:3]])
    plan = [("repaired", "accepted", list(CALLS)),
            ("first_time", "accepted", ["synth_plan", "synth_environment", "task_judge"]),
            ("given_up", "rejected", ["synth_plan", "synth_environment", "synth_repair_tests"])]
    out = {}
    for i, (kind, verdict, stages) in enumerate(plan):
        src = made[i]
        task_id, name = f"llmtask{i:02d}", f"skillgraph/llm-{kind.replace('_', '-')}"
        files = _bundle(name, src.category, src.skill_ids, src.path_id, f"llm-marker-{i}")
        bundle = TaskBundle(files)
        write_bundle(bundle, ws.root / "tasks" / task_id)
        store.save_task(ws.db, TaskRecord(task_id=task_id, name=name, path_id=src.path_id, category=src.category,
                                          difficulty="medium", n_steps=src.n_steps, recipes=[],
                                          skill_ids=src.skill_ids, scenario_ids=[], provider="llm",
                                          bundle_dir=f"tasks/{task_id}", bundle_hash=bundle.content_hash()))
        store.set_path_stage(ws.db, LLM_RUN_ID, src.path_id, "synthesized", task_id)
        _log_calls(ws, task_id, stages)
        repairs.save_attempts(ws.db, task_id, _attempts(kind))
        checks = _checks("accepted" if verdict == "accepted" else "oracle-fails", files)
        assert store.save_verification(ws.db, task_id, checks, "wb-task-llm", LLM_RUN_ID, src.path_id,
                                       **judged(checks)) == verdict
        out[kind] = FixtureTask(task_id, name, src.path_id, src.skill_ids, src.skill_names, src.n_steps,
                                src.category, verdict, files)
    store.set_run_status(ws.db, LLM_RUN_ID, "finished", "3 tasks synthesized, 2 accepted")
    return LLMFixture(**out)


def stage_cost(stages: list[str]) -> float:
    return sum(CALLS[s][0] * CALLS[s][3] for s in stages)
