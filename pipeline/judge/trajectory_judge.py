"""SETA's trajectory judge: a task no LLM agent solved goes to an LLM that says whether it is
too hard or flawed by design; a design flaw takes it out of the accepted set (an event a
person can undo on the Tasks page).

Which tasks are sent: accepted ones (not withdrawn) with pass rate 0 over at least
`min_rollouts` rollouts of LLM agents. Scripted agents (nop, oracle, ablation, and Harbor's
oracle/nop) say nothing about difficulty and are not counted; rollouts that crashed or were
stopped are no attempt and are not counted either. A task whose *oracle* fails in a rollout
is not sent: it is broken, not hard (its environment or tests changed since verification),
and the report says so. A task judged before over the same number of rollouts is not sent
again; a task a person restored after a withdrawal is judged but not withdrawn again.

The judge sees the instruction, the bundle's tests, which tests failed in every rollout vs
in some (analysis.failures.consistency_by_task, as the Failures page counts them) and the
end of each rollout's terminal (pipeline.judge.trajectory_evidence). One call per task,
stage `trajectory_judge`, item = task id. A reply that never fits the schema, or whose
quotes are not in what it was shown, or whose flawed tests do not exist, is no verdict: the
report names the task and the problem, nothing is stored or withdrawn, the other tasks go on.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

import pandas as pd
from pydantic import BaseModel, Field, field_validator

from analysis.failures import consistency_by_task, tests_of
from pipeline.agents.protocol import SCRIPTED_AGENTS, base_agent
from pipeline.judge import trajectory_evidence as ev
from workbench.llm.budget import BudgetExceeded
from workbench.llm.caller import LLMCaller
from workbench.llm.client import LLMCallError
from workbench.sandbox.bundle import BundleError, read_bundle
from workbench.store import rollouts as rollout_store
from workbench.store import trajectory_judgements as judgement_store
from workbench.store.tasks import accepted_tasks
from workbench.workspace import Workspace

STAGE = "trajectory_judge"
NOT_ATTEMPTS = ("crashed", "stopped")   # the harness failed or the batch was cancelled: no attempt
ORACLE_NOTE = ("its oracle fails in a rollout: task {task} is broken, not hard (its environment or tests no longer "
               "fit its solution; re-verify its bundle with `workbench verify`); not sent to the trajectory judge")


def is_llm_agent(agent: str) -> bool:
    return base_agent(agent) not in SCRIPTED_AGENTS


class Quote(BaseModel):
    source: Literal["instruction", "tests", "terminal"]
    quote: str = Field(min_length=1, description="text copied exactly from that part")

    @field_validator("quote", mode="before")
    @classmethod
    def _short(cls, v):  # cosmetic length: cut, don't re-ask
        return v.strip()[:400] if isinstance(v, str) else v


class TrajectoryJudgement(BaseModel):
    """The judge's reply on one unsolved task."""
    verdict: Literal["too_hard", "design_flaw"]
    reason: str = Field(min_length=1)
    evidence: list[Quote] = Field(min_length=1, max_length=6)
    flawed_tests: list[str] = Field(default_factory=list)

    @field_validator("reason", mode="before")
    @classmethod
    def _cut(cls, v):
        return v.strip()[:1000] if isinstance(v, str) else v


@dataclass
class JudgedTask:
    task_id: str
    name: str
    verdict: str
    reason: str
    n_rollouts: int
    consistent: list[str]
    sporadic: list[str]
    withdrawn: bool
    cost_usd: float
    note: str = ""          # e.g. restored by a person: not withdrawn again


@dataclass
class TrajectoryJudgeReport:
    candidates: int = 0                                   # unsolved tasks found
    judged: list[JudgedTask] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # task_id -> why not sent
    errors: dict[str, str] = field(default_factory=dict)   # task_id -> why its reply is no verdict
    stopped: str | None = None                            # budget spent / endpoint down: the rest wait
    model: str | None = None
    note: str | None = None                               # e.g. the judge is a test double

    @property
    def cost_usd(self) -> float:
        return sum(j.cost_usd for j in self.judged)

    def summary(self) -> str:
        flaws = sum(j.verdict == "design_flaw" for j in self.judged)
        withdrawn = sum(j.withdrawn for j in self.judged)
        parts = [f"trajectory judge: {self.candidates} unsolved task(s); judged {len(self.judged)} "
                 f"({flaws} design flaw(s), {withdrawn} withdrawn, {len(self.judged) - flaws} too hard)"]
        if self.skipped:
            parts.append(f"{len(self.skipped)} not sent")
        if self.errors:
            parts.append(f"{len(self.errors)} without a usable verdict")
        if self.stopped:
            parts.append(f"stopped: {self.stopped}")
        return "; ".join(parts)

    def as_dict(self) -> dict:
        return {**asdict(self), "cost_usd": self.cost_usd, "summary": self.summary()}


@dataclass(frozen=True)
class Unsolved:
    task_id: str
    rollouts: pd.DataFrame       # its counted LLM rollouts, newest first


def find_unsolved(rollouts: pd.DataFrame, *, min_rollouts: int = 3,
                  task_ids: set[str] | None = None) -> tuple[list[Unsolved], dict[str, str]]:
    """Tasks with pass rate 0 over >= min_rollouts counted LLM rollouts (of `task_ids` when
    given), and tasks left out with why (oracle failing). Pure: a rollouts frame in."""
    skipped: dict[str, str] = {}
    if task_ids is not None and len(rollouts):
        rollouts = rollouts[rollouts["task_id"].isin(task_ids)]
    if rollouts.empty:
        return [], skipped
    kinds = rollouts["agent"].map(base_agent)
    oracle_failed = set(rollouts.loc[(kinds == "oracle") & ~rollouts["passed"].astype(bool), "task_id"])
    llm = rollouts[rollouts["agent"].map(is_llm_agent) & ~rollouts["failure_class"].isin(NOT_ATTEMPTS)]
    out = []
    for task_id, mine in llm.groupby("task_id", sort=True):
        if len(mine) < min_rollouts or mine["passed"].astype(bool).any():
            continue
        if task_id in oracle_failed:
            skipped[str(task_id)] = ORACLE_NOTE.format(task=task_id)
            continue
        out.append(Unsolved(str(task_id), mine.sort_values("created_at", ascending=False)))
    return out, skipped


def _problem(reply: TrajectoryJudgement, texts: ev.TaskTexts, shown: dict[str, str]) -> str | None:
    """Why a reply is no verdict (a made-up quote or test), or None."""
    for q in reply.evidence:
        if ev.normalized(q.quote) not in ev.normalized(shown[q.source]):
            return f"its {q.source} quote is not in the {q.source} it was shown ({q.quote[:160]!r})"
    names = texts.test_names()
    if reply.verdict == "design_flaw":
        if not reply.flawed_tests:
            return "a design flaw naming no flawed test"
        if unknown := [t for t in reply.flawed_tests if t.split("::")[-1] not in names]:
            return f"flawed test(s) {', '.join(unknown)[:200]} are not defined in the tests"
    return None


def judge_unsolved(ws: Workspace, caller: LLMCaller, *, run_id: str | None = None,
                   min_rollouts: int = 3) -> TrajectoryJudgeReport:
    """Judge the accepted tasks no LLM agent solved (those a rollout batch `run_id` touched,
    or all); see the module's docstring. Raises nothing for one task's bad reply; an endpoint
    that fails or a spent budget stops the judging (report.stopped) with what was done kept."""
    report = TrajectoryJudgeReport(model=caller.client.settings.model)
    frame = rollout_store.rollouts_frame(ws.db)
    scope = set(rollout_store.rollouts_frame(ws.db, run_id)["task_id"]) if run_id else None
    accepted = accepted_tasks(ws.db).set_index("task_id")
    unsolved, report.skipped = find_unsolved(frame, min_rollouts=min_rollouts, task_ids=scope)
    report.candidates = len(unsolved) + len(report.skipped)
    judged_before = judgement_store.latest_judged_counts(ws.db)
    overruled = judgement_store.restored_by_a_person(ws.db)
    tests = rollout_store.test_outcomes(ws.db)
    for u in unsolved:
        n = len(u.rollouts)
        if u.task_id not in accepted.index:
            report.skipped[u.task_id] = "not in the accepted set (rejected, withdrawn or unknown)"
            continue
        if judged_before.get(u.task_id) == n:
            report.skipped[u.task_id] = f"judged before over the same {n} rollouts"
            continue
        row = accepted.loc[u.task_id]
        try:
            texts = ev.TaskTexts.of(read_bundle(ws.root / str(row["bundle_dir"])))
        except (BundleError, OSError) as exc:
            report.errors[u.task_id] = f"its bundle cannot be read: {exc}"
            continue
        counts = consistency_by_task(tests_of(tests, u.rollouts), [u.task_id])[u.task_id]
        terminal = ev.terminals_text(ws.root, list(zip(u.rollouts["rollout_id"], u.rollouts["failure_class"],
                                                       u.rollouts["folder"])))
        shown = {"instruction": ev.block(texts.instruction, ev.MAX_CHARS["instruction"]),
                 "tests": ev.block(texts.tests_text(), ev.MAX_CHARS["tests"]),
                 "terminal": ev.block(terminal, ev.MAX_CHARS["terminal"])}
        agents = ", ".join(sorted({f"{a} ({m})" if isinstance(m, str) and m else a
                                   for a, m in zip(u.rollouts["agent"], u.rollouts["model"])}))
        try:
            result = caller.render_and_ask(
                STAGE, u.task_id, TrajectoryJudgement, task_id=u.task_id, name=str(row["name"]),
                n_rollouts=str(n), agents=agents, consistent=", ".join(counts.consistent) or "(none)",
                sporadic=", ".join(counts.sporadic) or "(none)", **shown)
        except BudgetExceeded as exc:
            report.stopped = f"the LLM budget is spent ({exc}); run `workbench judge-trajectories` again to finish"
            break
        except LLMCallError as exc:
            if exc.endpoint_fault:
                report.stopped = f"the LLM endpoint failed ({exc}); run `workbench judge-trajectories` again"
                break
            report.errors[u.task_id] = f"the judge's reply could not be used: {exc}"
            continue
        reply: TrajectoryJudgement = result.parsed
        if problem := _problem(reply, texts, shown):
            report.errors[u.task_id] = f"the judge's reply is no verdict: {problem}"
            continue
        withdraw = reply.verdict == "design_flaw" and u.task_id not in overruled
        note = ("restored by a person after an earlier withdrawal: judged, not withdrawn again"
                if reply.verdict == "design_flaw" and not withdraw else "")
        evidence = {"consistent": counts.consistent, "sporadic": counts.sporadic,
                    "quotes": [q.model_dump() for q in reply.evidence], "flawed_tests": reply.flawed_tests,
                    "rollout_ids": list(u.rollouts["rollout_id"]), "withdrawn": withdraw,
                    "cached": result.cached, "note": note}
        judgement_store.save_judgement(ws.db, u.task_id, verdict=reply.verdict, reason=reply.reason,
                                       evidence=evidence, n_rollouts=n, model=result.model,
                                       cost_usd=result.cost_usd, withdraw=withdraw)
        report.judged.append(JudgedTask(u.task_id, str(row["name"]), reply.verdict, reply.reason, n,
                                        counts.consistent, counts.sporadic, withdraw, float(result.cost_usd), note))
    return report
