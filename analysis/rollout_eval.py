"""Figures of a rollout measurement on a workspace's accepted tasks (the dev corpus, the demo):
how each agent did against what it should do (oracle all pass, nop none), how often the
ablation probe's left-out solution step goes unnoticed by the tests (verifier strength), and
seconds per rollout. Pure functions of the frames `workbench.store.rollouts` returns
(`rollouts_frame`, `test_outcomes`); check-level vs task-level rates, near-misses and failure
classes are analysis/difficulty.py's and analysis/failures.py's, gathered here per agent.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis import difficulty, failures

# What a sound task's rollouts should give per scripted agent: the oracle passes every one, the
# no-op none. A rollout against this is a finding (a flaky or broken task, or a harness defect).
EXPECTED_PASS = {"oracle": True, "nop": False}
WEAKEST_TASKS = 10
# The offline synthesizer names each test after the step it checks (test_s2_rows checks step 2);
# tests named otherwise (LLM-written, imported) belong to no step here.
STEP_TEST = re.compile(r"^test_s(\d+)_")


def details_of(value: object) -> dict:
    """A rollout's details, whether the frame holds them as JSON text or as a dict."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        return json.loads(value)
    return {}


def pass_rates(rollouts: pd.DataFrame) -> pd.DataFrame:
    """Per agent: rollouts, tasks, rollouts passed, pass_rate (of rollouts), tasks_all_passed."""
    cols = ["agent", "agent_label", "rollouts", "tasks", "passed", "pass_rate", "tasks_all_passed"]
    if rollouts.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for agent, label in failures.agent_labels(rollouts).items():
        g = rollouts[rollouts["agent"] == agent]
        per_task = g.groupby("task_id")["passed"].all()
        rows.append({"agent": agent, "agent_label": label, "rollouts": len(g), "tasks": int(g["task_id"].nunique()),
                     "passed": int(g["passed"].sum()), "pass_rate": float(g["passed"].mean()),
                     "tasks_all_passed": int(per_task.sum())})
    return pd.DataFrame(rows, columns=cols)


def off_expectation(rollouts: pd.DataFrame) -> pd.DataFrame:
    """The rollouts of oracle and nop that did not do what a sound task makes them do: an oracle
    rollout that failed, a no-op rollout that passed. With why (failure class, error, tests)."""
    cols = ["agent", "task_id", "task_name", "sample", "passed", "failure_class", "n_tests", "n_failed", "error"]
    if rollouts.empty:
        return pd.DataFrame(columns=cols)
    expected = rollouts["agent"].map(EXPECTED_PASS)
    off = rollouts[expected.notna() & (rollouts["passed"].astype(bool) != expected.astype(bool))]
    return off.reindex(columns=cols).sort_values(["agent", "task_id", "sample"]).reset_index(drop=True)


def ablation_probes(rollouts: pd.DataFrame) -> pd.DataFrame:
    """One row per ablation rollout: the step it left out (number, label, the task's step count)
    and whether the task's tests caught it. `probed` is False when the solution had no step to
    leave out (the agent ran nothing); such a rollout says nothing about the tests. `aborted`: the
    rest of the script stopped at an error (set -e) once the step was gone, so the later steps did
    not run either: the tests then saw the step and everything after it missing."""
    cols = ["rollout_id", "task_id", "task_name", "sample", "steps", "step", "step_label", "step_text", "probed",
            "aborted",
            "caught", "failure_class", "n_tests", "n_failed"]
    abl = rollouts[rollouts["agent"] == "ablation"] if not rollouts.empty else rollouts
    rows = []
    for r in abl.itertuples(index=False):
        d = details_of(getattr(r, "details", None))
        left = d.get("left_out") or {}
        rows.append({"rollout_id": r.rollout_id, "task_id": r.task_id, "task_name": getattr(r, "task_name", None),
                     "sample": int(r.sample),
                     "steps": int(d.get("steps") or 0), "step": left.get("step"), "step_label": left.get("label"),
                     "step_text": left.get("text"), "probed": bool(left),
                     "aborted": bool(d.get("script_failed")), "caught": not bool(r.passed),
                     "failure_class": r.failure_class, "n_tests": int(r.n_tests), "n_failed": int(r.n_failed)})
    return pd.DataFrame(rows, columns=cols)


@dataclass(frozen=True)
class CatchRate:
    """Over probed ablation rollouts: `caught` failed (by any class), `by_tests` of them failed
    a test (test_assertion; the rest stopped the run otherwise, e.g. a timeout); `missed` passed:
    a solution step the tests do not check. `not_probed`: rollouts with no step to leave out.
    `aborted`: probed rollouts whose script stopped at an error without the step (see
    ablation_probes); `caught_intact`: caught ones whose script ran to its end without it, so the
    tests noticed the missing step itself."""
    probed: int
    caught: int
    by_tests: int
    not_probed: int
    aborted: int = 0
    caught_intact: int = 0

    @property
    def missed(self) -> int:
        return self.probed - self.caught

    @property
    def rate(self) -> float | None:
        return self.caught / self.probed if self.probed else None


def catch_rate(probes: pd.DataFrame) -> CatchRate:
    probed = probes[probes["probed"].astype(bool)]
    caught = probed[probed["caught"].astype(bool)]
    return CatchRate(probed=len(probed), caught=len(caught),
                     by_tests=int((caught["failure_class"] == "test_assertion").sum()),
                     not_probed=int((~probes["probed"].astype(bool)).sum()),
                     aborted=int(probed["aborted"].astype(bool).sum()),
                     caught_intact=int((~caught["aborted"].astype(bool)).sum()))


def step_of_test(name: str) -> int | None:
    m = STEP_TEST.match(str(name))
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class OwnTests:
    """Over probed ablation rollouts whose left-out step has tests of its own (STEP_TEST): in how
    many one of those failed (`own_failed`) — the tests check that step itself — and in how many
    only other steps' tests failed (`only_others`): the step's absence showed only through later
    steps that needed it. `without_own`: probes of a step with no test of its own (or whose tests
    did not run)."""
    with_own: int
    own_failed: int
    only_others: int
    without_own: int


def own_step_tests(probes: pd.DataFrame, tests: pd.DataFrame) -> OwnTests:
    """`tests`: the ablation rollouts' test outcomes (store.rollouts.test_outcomes), with their
    rollout_id; `probes` must carry rollout_id (ablation_probes keeps it)."""
    probed = probes[probes["probed"].astype(bool)]
    mine = tests[tests["rollout_id"].isin(probed["rollout_id"])].copy()
    mine["step"] = mine["test_name"].map(step_of_test)
    mine["failing"] = failures.is_failing(mine["outcome"])
    with_own = own_failed = only_others = without_own = 0
    for r in probed.itertuples(index=False):
        t = mine[mine["rollout_id"] == r.rollout_id]
        own = t[t["step"] == r.step]
        if own.empty:
            without_own += 1
            continue
        with_own += 1
        if own["failing"].any():
            own_failed += 1
        elif t["failing"].any():
            only_others += 1
    return OwnTests(with_own, own_failed, only_others, without_own)


def weakest_tasks(probes: pd.DataFrame, n: int = WEAKEST_TASKS) -> pd.DataFrame:
    """Tasks by catch rate, lowest first (ties: more probes first): probes, caught, catch_rate,
    steps (of the solution), distinct steps probed, and the labels of the steps left out unnoticed."""
    cols = ["task_id", "task_name", "probes", "caught", "catch_rate", "steps", "steps_probed", "missed_steps"]
    probed = probes[probes["probed"].astype(bool)]
    if probed.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for task_id, g in probed.groupby("task_id", sort=True):
        missed = list(dict.fromkeys(g.loc[~g["caught"], "step_label"]))
        rows.append({"task_id": task_id, "task_name": g["task_name"].iloc[0], "probes": len(g),
                     "caught": int(g["caught"].sum()), "catch_rate": float(g["caught"].mean()),
                     "steps": int(g["steps"].max()), "steps_probed": int(g["step"].nunique()), "missed_steps": missed})
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values(["catch_rate", "probes", "task_id"], ascending=[True, False, True]).head(n) \
        .reset_index(drop=True)


def seconds_per_rollout(rollouts: pd.DataFrame) -> pd.DataFrame:
    """Per agent: rollouts, mean / p50 / p95 of total seconds, mean agent and verifier seconds."""
    cols = ["agent", "rollouts", "mean_s", "p50_s", "p95_s", "agent_s", "verifier_s"]
    rows = []
    for agent in failures.agent_labels(rollouts):
        g = rollouts[rollouts["agent"] == agent]
        t = g["total_s"].astype(float).to_numpy()
        rows.append({"agent": agent, "rollouts": len(g), "mean_s": float(t.mean()),
                     "p50_s": float(np.percentile(t, 50)), "p95_s": float(np.percentile(t, 95)),
                     "agent_s": float(g["agent_s"].astype(float).mean()),
                     "verifier_s": float(g["verifier_s"].astype(float).mean())})
    return pd.DataFrame(rows, columns=cols)


def near_misses_by_agent(rollouts: pd.DataFrame) -> dict[str, failures.NearMisses]:
    return {agent: failures.near_misses(rollouts[rollouts["agent"] == agent])
            for agent in failures.agent_labels(rollouts)}


def _pct(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{100 * x:.1f}%"


def report_lines(rollouts: pd.DataFrame, tests: pd.DataFrame) -> list[str]:
    """The whole measurement as plain lines (for a closing note or a notebook's print)."""
    lines = ["pass rate per agent (rollouts passed / rollouts; tasks with every rollout passed):"]
    for r in pass_rates(rollouts).itertuples(index=False):
        lines.append(f"  {r.agent}: {r.passed}/{r.rollouts} = {_pct(r.pass_rate)} over {r.tasks} tasks "
                     f"({r.tasks_all_passed} all passed)")
    off = off_expectation(rollouts)
    lines.append(f"off expectation (oracle failed / nop passed): {len(off)}")
    for r in off.itertuples(index=False):
        lines.append(f"  {r.agent} {r.task_id} #{r.sample}: {r.failure_class or 'passed'} "
                     f"{r.n_failed}/{r.n_tests} tests failed; {str(r.error or '')[:160]}")
    probes = ablation_probes(rollouts)
    if len(probes):
        c = catch_rate(probes)
        lines.append(f"ablation catch rate: {c.caught}/{c.probed} = {_pct(c.rate)} (by a failed test {c.by_tests}; "
                     f"missed {c.missed}; not probed {c.not_probed}); script stopped at an error without the step "
                     f"{c.aborted}/{c.probed}, caught with the rest of the script run {c.caught_intact}")
        own = own_step_tests(probes, tests)
        lines.append(f"  left-out step with tests of its own: {own.with_own} (one of them failed {own.own_failed}; "
                     f"only other steps' tests failed {own.only_others}); step with none {own.without_own}")
        for r in weakest_tasks(probes).itertuples(index=False):
            if r.catch_rate < 1:
                lines.append(f"  {r.task_id} {r.task_name}: caught {r.caught}/{r.probes} (steps {r.steps}, "
                             f"probed {r.steps_probed}); unnoticed: {'; '.join(map(str, r.missed_steps))}")
    lines.append("check-level vs task-level pass rate:")
    for r in difficulty.check_vs_task(rollouts, tests).itertuples(index=False):
        lines.append(f"  {r.agent}: checks {r.checks_passed}/{r.checks_run} = {_pct(r.check_rate)}, "
                     f"tasks {r.rollouts_passed}/{r.rollouts} = {_pct(r.task_rate)}")
    lines.append(f"near-misses (failed rollouts missing 1..{failures.NEAR_MISS_MAX_FAILED} tests, of those whose "
                 "tests ran):")
    for agent, nm in near_misses_by_agent(rollouts).items():
        if nm.failed:
            lines.append(f"  {agent}: {nm.near}/{nm.with_tests} = {_pct(nm.share)} (failed {nm.failed})")
    lines.append("failure classes (failed rollouts):")
    for r in failures.failure_class_counts(rollouts).itertuples(index=False):
        lines.append(f"  {r.agent} {r.failure_class}: {r.rollouts} ({_pct(r.share)} of its rollouts)")
    lines.append("seconds per rollout (total; mean p50 p95 | agent, verifier means):")
    for r in seconds_per_rollout(rollouts).itertuples(index=False):
        lines.append(f"  {r.agent}: {r.mean_s:.1f} {r.p50_s:.1f} {r.p95_s:.1f} | {r.agent_s:.1f}, "
                     f"{r.verifier_s:.1f} over {r.rollouts}")
    return lines
