"""Unsolved tasks for the trajectory judge's tests, written through the real store: five
accepted sum tasks and their rollouts (terminus-2, nop, ablation, oracle) with agent.log files.

flawed: 3 terminus-2 rollouts, test_report (checks /app/report.txt, which the instruction never
names) fails in all, test_sum in one (sporadic). hard: test_sum fails in all 3. solved: one
of 3 passed. few: 2 LLM rollouts (+ nop and ablation failures and a crash, which do not count).
broken: its oracle fails too."""
from __future__ import annotations

from dataclasses import asdict

from pipeline.agents.protocol import AGENT_LABELS
from pipeline.rollouts.models import RolloutRecord, rollout_key
from tests.helpers import judged, sum_bundle
from workbench.models import CheckResult, TaskRecord
from workbench.sandbox.bundle import write_bundle
from workbench.store import rollouts as ro_store
from workbench.store import tasks as task_store

RUN = "rollrun-judge"
REPORT_TEST = ('def test_report():\n    """The report is written."""\n'
               '    assert open("/app/report.txt").read() == "done"\n')


def _task(ws, task_id: str, *, flawed: bool = False) -> None:
    extra = {"tests/test_report.py": REPORT_TEST} if flawed else {}
    bundle = sum_bundle(name=f"workbench/{task_id}", extra_files=extra)
    write_bundle(bundle, ws.root / "tasks" / task_id)
    task_store.save_task(ws.db, TaskRecord(task_id=task_id, name=f"workbench/{task_id}", path_id=f"p-{task_id}",
                                           category="text-processing", difficulty="easy", n_steps=1, recipes=[],
                                           skill_ids=[], scenario_ids=[], bundle_dir=f"tasks/{task_id}",
                                           bundle_hash=bundle.content_hash()))
    checks = [CheckResult(name="build", passed=True), CheckResult(name="noop", passed=True)]
    task_store.save_verification(ws.db, task_id, checks, None, **judged(checks))


def add_rollout(ws, task_id: str, agent: str, sample: int, outcomes: dict[str, str], *, log: str = "",
                failure: str | None = None) -> str:
    passed = all(o == "passed" for o in outcomes.values()) and failure is None
    rid = rollout_key(task_id, agent, sample)
    folder = f"runs/{RUN}/rollouts/{rid}"
    (ws.root / folder).mkdir(parents=True, exist_ok=True)
    (ws.root / folder / "agent.log").write_text(log or f"$ cat /app/numbers.txt\n1\n2\n3\n[{agent} sample {sample}]\n")
    n_failed = sum(o != "passed" for o in outcomes.values())
    rec = RolloutRecord(rid, RUN, task_id, agent, AGENT_LABELS.get(agent, agent), "m1" if agent == "terminus-2" else None,
                        sample, 0.0, "workbench", 1.0 if passed else 0.0, passed,
                        None if passed else (failure or "test_assertion"), len(outcomes), n_failed, 3, 0, 0, 0, 0.0,
                        1.0, 1.0, 2.0, None, folder)
    ro_store.save_rollout(ws.db, asdict(rec), [{"name": n, "outcome": o} for n, o in outcomes.items()])
    return rid


def make_unsolved(ws):
    """The five tasks and their rollouts in `ws` (see the module's docstring); returns ws."""
    for t in ("flawed", "hard", "solved", "few", "broken"):
        _task(ws, t, flawed=t == "flawed")
    for s in range(3):
        add_rollout(ws, "flawed", "terminus-2", s, {"test_report.py::test_report": "failed",
                                                    "test_outputs.py::test_sum": "failed" if s == 0 else "passed"})
        add_rollout(ws, "hard", "terminus-2", s, {"test_outputs.py::test_sum": "failed"},
                    log=f"$ echo 5 > /app/sum.txt\nrollout {s} gave up\n")
        add_rollout(ws, "solved", "terminus-2", s, {"test_outputs.py::test_sum": "passed" if s == 2 else "failed"})
        add_rollout(ws, "broken", "terminus-2", s, {"test_outputs.py::test_sum": "failed"})
    for s in range(2):
        add_rollout(ws, "few", "terminus-2", s, {"test_outputs.py::test_sum": "failed"})
    add_rollout(ws, "few", "nop", 0, {"test_outputs.py::test_sum": "failed"})
    add_rollout(ws, "few", "ablation", 0, {"test_outputs.py::test_sum": "failed"})
    add_rollout(ws, "broken", "oracle", 0, {"test_outputs.py::test_sum": "failed"})
    # a crashed rollout is no attempt: 'few' still has only 2
    add_rollout(ws, "few", "terminus-2", 5, {}, failure="crashed")
    return ws
