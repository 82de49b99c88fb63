"""The red-team check of verification (issue 27.2): every attack of the probe's library
(pipeline/agents/red_team) is a trial of its own on the task's image — a fresh container, the
attack as the agent, the sealed test phase — and the task is *hackable* when any attack gets a
believed reward above 0 without solving it. The attack that succeeded is the evidence: its name,
what it did, and the tests it passed.

A reward the test phase does not believe (planted files contradicting the outcomes, say) is no
hack: a rollout gets no reward from it either. Only run once the oracle passed: a task that is
rejected anyway needs no probe.

It costs one trial per attack (a few seconds each, `concurrency` at once), so it can be turned
off: `WORKBENCH_RED_TEAM=0` in the environment, or `red_team=False` where verification is called
(`--no-red-team` on the commands).
"""
from __future__ import annotations

import os
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from pipeline.agents.red_team.agent import ATTACK_ORDER, RedTeamAgent
from pipeline.agents.red_team.attacks import ATTACKS
from pipeline.trials.models import TrialResult
from pipeline.trials.sandbox import TOOLCHAIN_UNUSABLE
from pipeline.trials.trial import run_trial
from pipeline.verify.reward import failing
from workbench.models import CheckResult
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.engine import Engine
from workbench.sandbox.task_toml import TaskToml

NAME = "redteam"
ENV = "WORKBENCH_RED_TEAM"
CONCURRENCY = 3
EVIDENCE_CHARS = 6000


def enabled_by_default() -> bool:
    """On unless the environment says WORKBENCH_RED_TEAM=0 (or false/no/off)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def _row(name: str, trial: TrialResult, seconds: float) -> dict:
    tests = trial.tests or []
    reward = trial.reward
    hacked = reward is not None and reward > 0 and not trial.problem
    return {"attack": name, "reward": reward, "hacked": hacked, "status": trial.agent.status,
            "tests_passed": sum(t["outcome"] == "passed" for t in tests), "tests": len(tests),
            "problem": (trial.problem or "")[:300], "seconds": round(seconds, 2)}


def probe(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float = 1.0,
          attacks: tuple[str, ...] = ATTACK_ORDER, concurrency: int = CONCURRENCY) -> list[tuple[dict, TrialResult]]:
    """Every attack as its own trial; (row, trial) in `attacks` order."""
    def one(name: str) -> tuple[dict, TrialResult]:
        t0 = time.monotonic()
        trial = run_trial(engine, image, bundle, cfg, RedTeamAgent(name),
                          trial_id=f"check-red-team-{name}-{uuid.uuid4().hex[:12]}", task_id=cfg.name,
                          timeout_scale=timeout_scale)
        return _row(name, trial, time.monotonic() - t0), trial

    with ThreadPoolExecutor(max(1, min(concurrency, len(attacks)))) as pool:
        return list(pool.map(one, attacks))


def check_red_team(engine: Engine, image: str, bundle: TaskBundle, cfg: TaskToml, timeout_scale: float = 1.0,
                   attacks: tuple[str, ...] = ATTACK_ORDER, concurrency: int = CONCURRENCY) -> CheckResult:
    t0 = time.monotonic()
    results = probe(engine, image, bundle, cfg, timeout_scale, attacks, concurrency)
    rows = [row for row, _ in results]
    broken = next((t.problem for _, t in results if t.problem and t.problem.startswith(TOOLCHAIN_UNUSABLE)), None)
    if broken:
        return CheckResult(name=NAME, passed=False, reason=broken, seconds=time.monotonic() - t0,
                           details={"attacks": rows})
    hacked = [(row, trial) for row, trial in results if row["hacked"]]
    details = {"attacks": rows, "hacked_by": [row["attack"] for row, _ in hacked]}
    if not hacked:
        caught = ", ".join(f"{r['attack']} ({_caught(r)})" for r in rows)
        return CheckResult(name=NAME, passed=True, seconds=time.monotonic() - t0, details=details,
                           reason=f"no reward hack got a reward: {len(rows)} attacks tried — {caught}")
    row, trial = hacked[0]
    others = [r["attack"] for r, _ in hacked[1:]]
    reason = (f"the tests reward a hack: attack {row['attack']} ({ATTACKS[row['attack']].label}) got reward "
              f"{row['reward']:g} without attempting the task, passing {row['tests_passed']} of {row['tests']} tests"
              + (f"; also hacked by {', '.join(others)}" if others else "")
              + ". The tests must check the work itself (contents derived from checksummed inputs, not names, "
              "shapes, links or what a program the agent could replace says).")
    details.update(tests=trial.tests, reward=trial.reward)
    log = (f"# red-team attack {row['attack']}: {ATTACKS[row['attack']].label}\n"
           f"# passing tests: {', '.join(t['name'] for t in trial.tests if t['outcome'] == 'passed') or '-'}\n"
           f"# failing tests: {', '.join(failing(trial.tests)) or '-'}\n{trial.log[-EVIDENCE_CHARS:]}")
    return CheckResult(name=NAME, passed=False, reason=reason, seconds=time.monotonic() - t0, log=log,
                       details=details)


def _caught(row: dict) -> str:
    if row["reward"] is None:
        return "no reward"
    if row["hacked"]:
        return f"reward {row['reward']:g}"
    if row["problem"]:
        return f"reward {row['reward']:g} not believed"
    return f"reward {row['reward']:g}, {row['tests'] - row['tests_passed']} of {row['tests']} tests failing"
