"""Rollouts of five accepted tasks by nop, oracle, ablation and terminus-2 (two models), k = 3,
written through the real store functions (workbench/store/rollouts.py) with files in each
rollout's folder, for the Difficulty, Failures and Rollouts page tests (AppTest and browser).

Tasks (each bundle has four tests): two offline tasks (log-analysis, text-processing; sampler
random-walk), two LLM tasks (log-analysis, data-processing; sampler inverse-frequency) and one
offline task without rollouts. `rolltask03` is the task no rollout solved (its oracle was never
run; terminus-2 never completed it, timed out or missed a test). What each rollout did is the
table `PLAN` below; the expectations the tests assert are worked out from it (`expected_*`), so
the fixture and the tests cannot drift apart.

Every rollout folder holds trajectory.json (ATIF, made with pipeline.trajectories.atif's builder), agent.log, verifier/reward.txt,
verifier/ctrf.json and result.json; terminus-2 rollouts also recording.cast (asciinema v2).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.agents.protocol import AGENT_LABELS
from pipeline.rollouts.models import RolloutRecord, rollout_key
from pipeline.trajectories.atif import TrajectoryBuilder
from tests.helpers import judged
from tests.pages.synth_fixture import SENTENCE, SENTENCE_MD, _checks
from tests.pages.synth_fixture import _bundle as synth_bundle
from workbench.models import TaskRecord
from workbench.sandbox.bundle import TaskBundle, write_bundle
from workbench.store import graph as graph_store
from workbench.store import rollouts as ro_store
from workbench.store import tasks as task_store

TESTS = ("test_outputs.py::test_out_exists", "test_outputs.py::test_count", "test_outputs.py::test_format",
         "test_outputs.py::test_log_untouched")
EXISTS, COUNT, FORMAT, UNTOUCHED = TESTS
MODELS = ("gpt-4o-mini", "qwen3-coder")


@dataclass(frozen=True)
class FixtureRolloutTask:
    task_id: str
    name: str
    category: str
    provider: str
    sampler: str
    recipes: tuple[str, ...]
    n_steps: int


TASKS = (
    FixtureRolloutTask("rolltask00", "skillgraph/count-errors-short", "log-analysis", "offline", "random-walk",
                       ("app-log-errors", "lines-tally"), 0),
    FixtureRolloutTask("rolltask01", "skillgraph/normalise-text", "text-processing", "offline", "random-walk",
                       ("text-normalise", "regex-extract"), 0),
    FixtureRolloutTask("rolltask02", "skillgraph/llm-log-correlate", "log-analysis", "llm", "inverse-frequency",
                       ("llm:log-correlate", "llm:grep"), 0),
    FixtureRolloutTask("rolltask03", "skillgraph/llm-unsolved", "data-processing", "llm", "inverse-frequency",
                       ("llm:jq", "llm:csvkit"), 0),
    FixtureRolloutTask("rolltask04", "skillgraph/no-rollouts-yet", "text-processing", "offline", "random-walk",
                       ("line-diff",), 0),
)
UNSOLVED_TASK = "rolltask03"
NO_ROLLOUTS_TASK = "rolltask04"

# One batch per agent (and model), as `workbench rollout` makes them.
RUNS = {("nop", None): "rollfix-nop", ("oracle", None): "rollfix-oracle", ("ablation", None): "rollfix-ablation",
        ("terminus-2", MODELS[0]): "rollfix-t2-mini", ("terminus-2", MODELS[1]): "rollfix-t2-qwen"}

# (task, agent, model) -> k outcomes; an outcome: "pass", or (failure class, failed tests).
# Failed tests None: the verifier gave no per-test result (the agent crashed before it ran).
NOP_FAIL = ("test_assertion", TESTS)
PLAN: dict[tuple[str, str, str | None], list] = {
    **{(t, "nop", None): [NOP_FAIL] * 3 for t in ("rolltask00", "rolltask01", "rolltask02", "rolltask03")},
    **{(t, "oracle", None): ["pass"] * 3 for t in ("rolltask00", "rolltask01", "rolltask02")},
    ("rolltask00", "ablation", None): [("test_assertion", (COUNT,)), "pass", ("test_assertion", (COUNT, FORMAT))],
    ("rolltask01", "ablation", None): [("test_assertion", (FORMAT,))] * 3,
    ("rolltask02", "ablation", None): [("test_assertion", (COUNT,)), ("test_assertion", (COUNT,)), "pass"],
    ("rolltask03", "ablation", None): [("test_assertion", (EXISTS, COUNT, FORMAT))] * 3,
    ("rolltask00", "terminus-2", MODELS[0]): ["pass", ("test_assertion", (COUNT,)), "pass"],
    ("rolltask01", "terminus-2", MODELS[0]): ["pass"] * 3,
    ("rolltask02", "terminus-2", MODELS[0]): [("timeout", (EXISTS, COUNT, FORMAT)), "pass",
                                              ("parse_errors", (EXISTS, COUNT, FORMAT))],
    ("rolltask03", "terminus-2", MODELS[0]): [("never_completed", (COUNT, FORMAT)), ("timeout", (EXISTS, COUNT, FORMAT)),
                                              ("test_assertion", (COUNT,))],
    ("rolltask00", "terminus-2", MODELS[1]): [("test_assertion", (COUNT,)), "pass", ("test_assertion", (COUNT, FORMAT))],
    ("rolltask01", "terminus-2", MODELS[1]): ["pass", ("crashed", None), "pass"],
    ("rolltask02", "terminus-2", MODELS[1]): [("test_assertion", (COUNT,))] * 3,
    ("rolltask03", "terminus-2", MODELS[1]): [("test_assertion", (COUNT,)), ("never_completed", (COUNT, FORMAT)),
                                              ("test_assertion", (COUNT, FORMAT))],
}
ASSERTION_MESSAGES = {EXISTS: "assert Path('/app/out.txt').exists()", COUNT: "assert '19' == '20'",
                      FORMAT: "assert 'ERRORS: 20\\n'.endswith('\\n') and no label",
                      UNTOUCHED: "the log was changed"}


@dataclass
class RolloutsFixture:
    tasks: list[FixtureRolloutTask]
    records: list[dict]                       # asdict(RolloutRecord) of every rollout written
    tests: dict[str, list[dict]] = field(default_factory=dict)   # rollout_id -> its test outcomes
    root: Path | None = None

    def of(self, task_id: str | None = None, agent: str | None = None, model: str | None = None) -> list[dict]:
        return [r for r in self.records if (task_id is None or r["task_id"] == task_id)
                and (agent is None or r["agent"] == agent) and (model is None or r["model"] == model)]


def _bundle(name: str, category: str, marker: str) -> dict[str, str]:
    """The Synthesis fixture's count-the-errors bundle with four tests instead of two."""
    tests = "from pathlib import Path\n\n"
    for test, body in (("test_out_exists", "assert Path('/app/out.txt').exists()"),
                       ("test_count", "assert Path('/app/out.txt').read_text().strip() == '20'"),
                       ("test_format", "assert Path('/app/out.txt').read_text() == '20\\n'"),
                       ("test_log_untouched", "assert len(Path('/app/server.log').read_text().splitlines()) == 60")):
        tests += f"\ndef {test}():\n    \"\"\"{SENTENCE}\"\"\"\n    {body}\n\n"
    return {**synth_bundle(name, category, [], "", marker), "tests/test_outputs.py": tests.rstrip() + "\n"}


def _save_tasks(ws) -> list[FixtureRolloutTask]:
    """The five tasks, accepted, on sampled paths of two synthesis runs (so the sampler is known)."""
    batch_id = graph_store.sample_batches(ws.db)["batch_id"].iloc[0]
    steps = graph_store.path_steps(ws.db, batch_id)
    lengths = steps.groupby("path_id")["step"].count().sort_values(kind="stable")
    # paths of different lengths where the sample has them, so the path-length breakdown separates tasks
    picks = list(lengths.drop_duplicates().index)[:len(TASKS)]
    picks += [p for p in lengths.index if p not in picks][:len(TASKS) - len(picks)]
    runs = {"random-walk": ("rollfix-synth-offline", "offline"), "inverse-frequency": ("rollfix-synth-llm", "llm")}
    for sampler, (run_id, provider) in runs.items():
        mine = [picks[i] for i, t in enumerate(TASKS) if t.sampler == sampler]
        task_store.create_run(ws.db, run_id, sampler, len(mine), 7, provider, 2, None)
        task_store.attach_paths(ws.db, run_id, batch_id, mine)
    out = []
    for i, t in enumerate(TASKS):
        path_id = picks[i]
        path = steps[steps["path_id"] == path_id].sort_values("step")
        t = FixtureRolloutTask(t.task_id, t.name, t.category, t.provider, t.sampler, t.recipes, len(path))
        files = _bundle(t.name, t.category, f"rollout-marker-{i}")
        bundle = TaskBundle(files)
        write_bundle(bundle, ws.root / "tasks" / t.task_id)
        task_store.save_task(ws.db, TaskRecord(
            task_id=t.task_id, name=t.name, path_id=path_id, category=t.category, difficulty="medium",
            n_steps=t.n_steps, recipes=list(t.recipes), skill_ids=path["skill_id"].tolist(),
            scenario_ids=path["src_anchor"].tolist(), provider=t.provider, bundle_dir=f"tasks/{t.task_id}",
            bundle_hash=bundle.content_hash()))
        run_id = runs[t.sampler][0]
        task_store.set_path_stage(ws.db, run_id, path_id, "synthesized", t.task_id)
        checks = _checks("accepted", files)
        assert task_store.save_verification(ws.db, t.task_id, checks, "wb-task-rollfix", run_id, path_id,
                                            **judged(checks)) == "accepted"
        out.append(t)
    for run_id, _ in runs.values():
        task_store.set_run_status(ws.db, run_id, "finished", "tasks accepted")
    return out


# --- the files of a rollout -------------------------------------------------------------------

def _trajectory(rollout_id: str, agent: str, model: str | None, passed: bool, failure: str | None) -> dict:
    """An ATIF document shaped as our agents write it: a scripted agent's one bash call of its
    script; terminus-2's turns as Harbor's Terminus-2 records them (the raw JSON reply as the
    message, each keystroke string a bash_command tool call, the pane's new output observed)."""
    b = TrajectoryBuilder(rollout_id, agent, "1", model)
    if agent != "terminus-2":
        script = {"nop": "true", "oracle": "bash /solution/solve.sh",
                  "ablation": "bash /solution/solve.sh  # step 2 left out"}[agent]
        b.user(f"# Count the errors\n\n{SENTENCE_MD}\n")
        b.agent(f"Runs `{script}`.", tool_calls=[{"tool_call_id": "call_1", "function_name": "bash",
                                                 "arguments": {"command": script}}],
                observation="exit code 0", llm_call_count=0)
        return b.finish()
    turns = [("I need to look at the log first.", "List /app and count ERROR lines.",
              [("ls /app\n", 0.5), ("grep -c ERROR /app/server.log\n", 0.5)], "server.log\n20\n"),
             ("The count is 20.", "Write it to /app/out.txt.",
              [("grep -c ERROR /app/server.log > /app/out.txt\n", 0.5)], "")]
    b.system("You are an AI assistant solving tasks in a Linux terminal.")
    b.user(f"# Count the errors\n\n{SENTENCE_MD}\n\nCurrent terminal state:\nroot@box:/app# ")
    metrics = {"prompt_tokens": 800, "completion_tokens": 120, "cost_usd": 0.0002}
    for n, (analysis, plan, commands, output) in enumerate(turns, 1):
        reply = {"analysis": analysis, "plan": plan,
                 "commands": [{"keystrokes": k, "duration": d} for k, d in commands], "task_complete": False}
        calls = [{"tool_call_id": f"call_{n}_{i}", "function_name": "bash_command",
                  "arguments": {"keystrokes": k, "duration": d}} for i, (k, d) in enumerate(commands, 1)]
        b.agent(json.dumps(reply), tool_calls=calls, observation=[{"content": output or "root@box:/app# "}],
                metrics=metrics, model_name=model)
    if failure == "parse_errors":
        b.agent("I think the task is done {not json", metrics=metrics, model_name=model,
                observation="ERROR: the reply was not valid JSON: Expecting property name")
    if passed or failure == "test_assertion":
        b.agent(json.dumps({"analysis": "Done.", "plan": "", "commands": [], "task_complete": True}),
                tool_calls=[{"tool_call_id": "call_done", "function_name": "mark_task_complete", "arguments": {}}],
                observation="Task marked complete.", metrics=metrics, model_name=model)
    return b.finish()


def _recording() -> str:
    header = {"version": 2, "width": 160, "height": 40, "timestamp": 1796112000, "env": {"SHELL": "/bin/bash"}}
    events = [[0.1, "o", "root@box:/app# "], [0.6, "o", "ls /app\r\nserver.log\r\n"],
              [1.2, "o", "root@box:/app# grep -c ERROR /app/server.log\r\n20\r\n"], [1.9, "o", "root@box:/app# "]]
    return "\n".join(json.dumps(x) for x in [header, *events]) + "\n"


def _ctrf(tests: list[dict]) -> str:
    status = {"passed": "passed", "failed": "failed", "error": "failed", "skipped": "skipped"}
    rows = [{"name": t["name"], "status": status[t["outcome"]], "duration": 3,
             **({"message": t["message"]} if t.get("message") else {})} for t in tests]
    summary = {"tests": len(rows), **{s: sum(r["status"] == s for r in rows) for s in ("passed", "failed", "skipped")},
               "pending": 0, "other": 0, "start": 0, "stop": 1}
    return json.dumps({"results": {"tool": {"name": "pytest"}, "summary": summary, "tests": rows}}, indent=1)


def _write_folder(root: Path, rec: dict, tests: list[dict], trajectory: dict) -> None:
    folder = root / rec["folder"]
    (folder / "verifier").mkdir(parents=True, exist_ok=True)
    (folder / "trajectory.json").write_text(json.dumps(trajectory, indent=1))
    if rec["agent"] == "terminus-2":
        (folder / "recording.cast").write_text(_recording())
    (folder / "agent.log").write_text(f"{rec['agent_label']}: {rec['failure_class'] or 'passed'}\n")
    if rec["reward"] is not None:
        (folder / "verifier" / "reward.txt").write_text(f"{int(rec['reward'])}\n")
    if tests:
        (folder / "verifier" / "ctrf.json").write_text(_ctrf(tests))
    (folder / "result.json").write_text(json.dumps(rec, indent=1, default=str))


# --- the rollouts ------------------------------------------------------------------------------

def _record(task: FixtureRolloutTask, bundle_hash: str, agent: str, model: str | None, sample: int,
            outcome) -> tuple[dict, list[dict]]:
    run_id = RUNS[(agent, model)]
    temperature = 0.7 if agent == "terminus-2" else 0.0
    agent_key = f"{agent}:{model}:{temperature}" if model else agent
    rid = rollout_key(bundle_hash, agent_key, sample)
    passed = outcome == "pass"
    failure, failed = (None, ()) if passed else outcome
    if failed is None:          # crashed before the verifier ran: no per-test outcomes, no reward
        tests = []
    else:
        tests = [{"name": t, "outcome": "failed" if t in failed else "passed",
                  "message": ASSERTION_MESSAGES[t] if t in failed else ""} for t in TESTS]
    llm = agent == "terminus-2"
    turns = (3 if passed or failure == "test_assertion" else 6) if llm else 1
    label = AGENT_LABELS[agent] + (f" · {model}" if model else "")
    rec = RolloutRecord(
        rollout_id=rid, run_id=run_id, task_id=task.task_id, agent=agent, agent_label=label, model=model,
        sample=sample, temperature=temperature, source="workbench", reward=None if failed is None else float(passed),
        passed=passed, failure_class=failure, n_tests=len(tests), n_failed=sum(t["outcome"] != "passed" for t in tests),
        turns=turns, parse_errors=int(failure == "parse_errors") * 3, prompt_tokens=2400 * turns if llm else 0,
        completion_tokens=150 * turns if llm else 0, cost_usd=0.0002 * turns if llm else 0.0,
        agent_s=(40.0 if failure == "timeout" else 12.0 + sample) if llm else 0.4, verifier_s=1.5,
        total_s=(44.0 if failure == "timeout" else 16.0 + sample) if llm else 3.1,
        overhead_ms_per_turn=18.0 + sample if llm else None, folder=f"runs/{run_id}/rollouts/{rid}",
        error="the agent's process exited (code 137) before the verifier ran" if failure == "crashed" else None,
        details={"step_left_out": 2 - sample % 2} if agent == "ablation" else {})
    return asdict(rec), tests


def make_rollouts_fixture(ws) -> RolloutsFixture:
    """Write the tasks, the rollout batches and every rollout of `PLAN` (with its folder) into
    ``ws``, which must hold a graph with sampled paths (the `graph_workspace` fixture)."""
    tasks = _save_tasks(ws)
    by_id = {t.task_id: t for t in tasks}
    hashes = dict(task_store.tasks_frame(ws.db)[["task_id", "bundle_hash"]].itertuples(index=False))
    for (agent, model), run_id in RUNS.items():
        keys = [key for key in PLAN if key[1:] == (agent, model)]
        ro_store.create_run(ws.db, run_id, agent=agent, model=model, k=3, concurrency=2, n_tasks=len(keys),
                            params={"temperature": 0.7 if model else 0.0, "tasks": sorted(k[0] for k in keys)})
    fx = RolloutsFixture(tasks=tasks, records=[], root=ws.root)
    for (task_id, agent, model), outcomes in PLAN.items():
        for sample, outcome in enumerate(outcomes):
            rec, tests = _record(by_id[task_id], hashes[task_id], agent, model, sample, outcome)
            ro_store.save_rollout(ws.db, rec, tests)
            _write_folder(ws.root, rec, tests, _trajectory(rec["rollout_id"], agent, model, rec["passed"],
                                                          rec["failure_class"]))
            fx.records.append(rec)
            fx.tests[rec["rollout_id"]] = tests
    for run_id in RUNS.values():
        ro_store.set_run_status(ws.db, run_id, "done", "finished")
    return fx


# --- expectations, worked out from PLAN -------------------------------------------------------

def expected_passes(task_id: str, agent: str, model: str | None = None) -> tuple[int, int]:
    """(passed, rollouts) of one task by one agent (and model)."""
    outcomes = PLAN.get((task_id, agent, model), [])
    return sum(o == "pass" for o in outcomes), len(outcomes)


def expected_check_rate(agent: str | None = None) -> tuple[int, int]:
    """(tests passed, tests run) over every rollout (of one agent)."""
    passed = run = 0
    for (_, a, _), outcomes in PLAN.items():
        if agent is not None and a != agent:
            continue
        for o in outcomes:
            if o == "pass":
                passed, run = passed + len(TESTS), run + len(TESTS)
            elif o[1] is not None:
                passed, run = passed + len(TESTS) - len(o[1]), run + len(TESTS)
    return passed, run
