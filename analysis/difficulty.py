"""How hard tasks are, from their rollouts: pass@1 and unbiased pass@k per task and agent,
difficulty bands, their distribution over what a task was made from (category, path length,
sampler, recipe family, provider), and check-level vs task-level pass rates (FACET: 89.4% of
checks pass but 20.9% of whole tasks).

Pure functions of the frames `workbench.store.rollouts` returns (`rollouts_frame`,
`test_outcomes`): nothing here reads the store or imports Streamlit, so notebooks can use it
too. The figures are in analysis/difficulty_figures.py.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from analysis import failures as fail
from pipeline.synth.llm.fidelity import recipe_of
from workbench import double_rule

BANDS = ("unsolved", "hard", "medium", "easy", "solved")
# Cut points on a task's pass rate r = c/n (c of its n rollouts passed), as exact fractions so a
# rate of 1/3 is 1/3. Thirds, so the bands are symmetric: hard when at most a third of the
# rollouts pass, easy when at least two thirds do. At the usual k = 3 that reads 0/3 unsolved,
# 1/3 hard, 2/3 easy, 3/3 solved; medium takes what lies strictly between (2/4, 2/5, 3/5 …), where
# SETA-Evol's r = 0.5 boundary between "context switch" and "make it harder" falls.
HARD_AT_MOST = Fraction(1, 3)
EASY_AT_LEAST = Fraction(2, 3)
BAND_COLORS = {"unsolved": "#7f0000", "hard": "#d7301f", "medium": "#fc8d59", "easy": "#91bfdb",
               "solved": "#2c7bb6"}

# What a distribution can be broken down by: label shown -> column of the difficulty frame.
DIMENSIONS = {"category": "category", "path length": "n_steps", "sampler": "sampler",
              "recipe family": "recipe_family", "provider": "provider"}
LLM_FAMILY = "LLM-planned (no recipe)"   # an LLM-built step names its skill, not a family
_LLM_RECIPE = recipe_of("")               # the prefix of such a step's `recipes` entry
UNKNOWN = "unknown"                       # a task no synthesis run names (e.g. imported)
TASK_FACTS = ("task_name", "category", "n_steps", "recipes", "provider", "sampler", "withdrawn")
DIFFICULTY_COLUMNS = ["task_id", "agent", "model", "agent_label", "rollouts", "passed", "pass@1", "k", "pass@k",
                      "band", *TASK_FACTS]
RATE_COLUMNS = ["agent", "model", "agent_label", "rollouts", "rollouts_passed", "task_rate", "checks_run",
                "checks_passed", "check_rate", "rollouts_without_tests"]


# --- the estimators ---------------------------------------------------------------------------

def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of Codex (Chen et al. 2021): the chance that at least one of k
    rollouts drawn without replacement from n, c of which passed, passes:
    1 - C(n-c, k) / C(n, k), computed as a product so large n does not overflow."""
    if not 0 <= c <= n:
        raise ValueError(f"pass@k: {c} passed of {n} rollouts is not a count (0 ≤ c ≤ n)")
    if not 1 <= k <= n:
        raise ValueError(f"pass@k: k = {k} needs 1 ≤ k ≤ n = {n} rollouts")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def band(c: int, n: int) -> str:
    """A task's difficulty band from c passed of n rollouts (cut points above)."""
    if n <= 0 or not 0 <= c <= n:
        raise ValueError(f"band: {c} passed of {n} rollouts (need n ≥ 1 and 0 ≤ c ≤ n)")
    if c == 0:
        return "unsolved"
    if c == n:
        return "solved"
    rate = Fraction(c, n)
    if rate <= HARD_AT_MOST:
        return "hard"
    return "easy" if rate >= EASY_AT_LEAST else "medium"


# --- who ran it, and filters (the Failures page's rules: analysis/failures.py) ------------------

def agent_label(agent: str, model: str | None, stored: object = None) -> str:
    """What a figure or table calls an agent config: the Failures page's agent label (ablation says
    it is a verifier probe, not a model), with the model where there is one."""
    base = fail.agent_label(agent, stored, model)
    return f"{base} · {double_rule.model_label(model)}" if model else base


def by_double(frame: pd.DataFrame) -> pd.Series:
    """Per row of a frame with `agent` and `model` (rollouts, check_vs_task, task_difficulty): a
    simulated agent's or a test double's (workbench.double_rule), whose rates are no model's and so
    are never set beside a paper's."""
    models = frame["model"] if "model" in frame else pd.Series(None, index=frame.index, dtype=object)
    return pd.Series([double_rule.is_double(agent=a, model=m) for a, m in zip(frame["agent"], models)],
                     index=frame.index, dtype=bool)


def _model(value) -> str:
    return value if isinstance(value, str) else ""


def _with_agents(rollouts: pd.DataFrame) -> pd.DataFrame:
    out = rollouts.copy()
    out["model"] = out["model"].map(_model).astype(object)
    stored = out["agent_label"] if "agent_label" in out else [None] * len(out)
    out["agent_label"] = pd.Series([agent_label(a, m, s) for a, m, s in zip(out["agent"], out["model"], stored)],
                                   index=out.index, dtype=object)
    return out


def agent_options(rollouts: pd.DataFrame) -> list[str]:
    """The agents present, in the protocol's order (others, e.g. imported Harbor agents, after)."""
    return list(fail.agent_labels(rollouts))


model_options = fail.model_options   # scripted agents read "(no model)", as on the Failures page


@dataclass(frozen=True)
class DifficultyFilter:
    """Empty means all. Models as `model_options` names them."""
    agents: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    bands: tuple[str, ...] = ()     # applied to the difficulty frame, not to rollouts
    # A task the trajectory judge (or a person) withdrew as a design flaw is out of the accepted
    # set: its failures say nothing about how hard a sound task is (SETA discards such tasks).
    withdrawn: bool = False


def filter_rollouts(rollouts: pd.DataFrame, f: DifficultyFilter) -> pd.DataFrame:
    out = fail.filter_rollouts(rollouts, agents=f.agents, models=f.models, runs=f.runs)
    if not f.withdrawn and "withdrawn" in out:
        out = out[~out["withdrawn"].fillna(False).astype(bool)]
    return out[out["category"].isin(f.categories)] if f.categories else out


def withdrawn_tasks(rollouts: pd.DataFrame) -> list[str]:
    """The tasks with rollouts that are withdrawn from the accepted set."""
    if rollouts.empty or "withdrawn" not in rollouts:
        return []
    return sorted(set(rollouts.loc[rollouts["withdrawn"].fillna(False).astype(bool), "task_id"]))


def filter_bands(difficulty: pd.DataFrame, bands: Iterable[str]) -> pd.DataFrame:
    bands = tuple(bands)
    return difficulty[difficulty["band"].isin(bands)] if bands else difficulty


# --- per task ----------------------------------------------------------------------------------

def task_difficulty(rollouts: pd.DataFrame, k: int | None = None) -> pd.DataFrame:
    """One row per task and agent config (agent, model): rollouts n, passed c, pass@1 (= c/n),
    pass@k (k given, else k = n; NaN where the task has fewer than k rollouts), band, and the
    task's facts for breakdowns. Hardest first within an agent."""
    if rollouts.empty:
        return pd.DataFrame(columns=DIFFICULTY_COLUMNS)
    df = _with_agents(rollouts)
    facts = [c for c in TASK_FACTS if c in df]
    grouped = df.groupby(["task_id", "agent", "model"], sort=False)
    out = grouped.agg(agent_label=("agent_label", "first"), rollouts=("passed", "size"),
                      passed=("passed", "sum"), **{c: (c, "first") for c in facts}).reset_index()
    out["passed"] = out["passed"].astype(int)
    out["pass@1"] = out["passed"] / out["rollouts"]
    out["k"] = [k if k is not None else n for n in out["rollouts"]]
    out["pass@k"] = [pass_at_k(n, c, kk) if kk <= n else np.nan
                     for n, c, kk in zip(out["rollouts"], out["passed"], out["k"])]
    out["band"] = pd.Categorical([band(c, n) for c, n in zip(out["passed"], out["rollouts"])], categories=BANDS)
    for c in TASK_FACTS:
        if c not in out:
            out[c] = None
    out["sampler"] = out["sampler"].fillna(UNKNOWN)
    order = {a: i for i, a in enumerate(agent_options(df))}
    out = out.assign(_a=out["agent"].map(order)).sort_values(["_a", "model", "pass@1", "task_id"], kind="stable")
    return out.drop(columns="_a")[DIFFICULTY_COLUMNS].reset_index(drop=True)


def band_counts(difficulty: pd.DataFrame) -> pd.DataFrame:
    """Tasks per band and agent config: agent_label, band, tasks (every band, zeros included)."""
    labels = list(dict.fromkeys(difficulty["agent_label"])) if len(difficulty) else []
    grid = pd.MultiIndex.from_product([labels, BANDS], names=["agent_label", "band"])
    counts = difficulty.groupby(["agent_label", "band"], observed=False).size() if len(difficulty) else \
        pd.Series(dtype=int)
    return counts.reindex(grid, fill_value=0).rename("tasks").reset_index()


# --- distributions -----------------------------------------------------------------------------

def recipe_families(recipes) -> list[str]:
    """The recipe families of a task's steps, once each; an LLM-built step has none of its own."""
    if recipes is None or (isinstance(recipes, float) and np.isnan(recipes)):
        return []
    return list(dict.fromkeys(LLM_FAMILY if str(r).startswith(_LLM_RECIPE) else str(r) for r in recipes))


def band_distribution(difficulty: pd.DataFrame, dimension: str) -> pd.DataFrame:
    """Tasks per value of a dimension (a key of DIMENSIONS) and band, per agent config:
    agent_label, value, band, tasks. A task with steps of several recipe families counts once
    under each."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"dimension {dimension!r}: one of {', '.join(DIMENSIONS)}")
    cols = ["agent_label", "value", "band", "tasks"]
    if difficulty.empty:
        return pd.DataFrame(columns=cols)
    df = difficulty.copy()
    if dimension == "recipe family":
        df["value"] = df["recipes"].map(lambda r: recipe_families(r) or [UNKNOWN])
        df = df.explode("value")
    else:
        df["value"] = df[DIMENSIONS[dimension]].fillna(UNKNOWN)
    counts = df.groupby(["agent_label", "value", "band"], observed=True).size().rename("tasks").reset_index()
    counts["band"] = pd.Categorical(counts["band"], categories=BANDS)
    return counts.sort_values(["agent_label", "value", "band"], kind="stable").reset_index(drop=True)[cols]


# --- checks vs tasks ---------------------------------------------------------------------------

def check_vs_task(rollouts: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """Per agent config: the share of rollouts that passed as a whole (task_rate) beside the share
    of individual tests that passed (check_rate; skipped tests left out). A rollout without
    per-test outcomes (it crashed before the verifier) counts for the task rate only."""
    if rollouts.empty:
        return pd.DataFrame(columns=RATE_COLUMNS)
    df = _with_agents(rollouts)
    mine = fail.tests_of(tests, df)
    ran = mine[mine["outcome"] != "skipped"]     # a skipped test counts neither way
    per = ran.groupby("rollout_id")["outcome"].agg(checks_run="size", checks_passed=lambda s: int((s == "passed").sum()))
    df = df.join(per, on="rollout_id")
    rows = []
    for (agent, model), g in df.groupby(["agent", "model"], sort=False):
        run = int(g["checks_run"].fillna(0).sum())
        passed = int(g["checks_passed"].fillna(0).sum())
        rows.append({"agent": agent, "model": model, "agent_label": g["agent_label"].iloc[0], "rollouts": len(g),
                     "rollouts_passed": int(g["passed"].sum()), "task_rate": float(g["passed"].mean()),
                     "checks_run": run, "checks_passed": passed, "check_rate": passed / run if run else np.nan,
                     "rollouts_without_tests": int(g["checks_run"].isna().sum())})
    order = {a: i for i, a in enumerate(agent_options(df))}
    out = pd.DataFrame(rows, columns=RATE_COLUMNS)
    return out.assign(_a=out["agent"].map(order)).sort_values(["_a", "model"]).drop(columns="_a") \
        .reset_index(drop=True)


# --- the page's table and pickers ------------------------------------------------------------

# the figures first, the (long) agent label after them
TABLE_COLUMNS = ["task_id", "task_name", "band", "pass@1", "pass@k", "k", "rollouts", "passed", "agent_label",
                 "category", "n_steps", "provider", "sampler"]


def task_table(difficulty: pd.DataFrame) -> pd.DataFrame:
    """The difficulty frame as the page's table shows it (band as text)."""
    out = difficulty.reindex(columns=TABLE_COLUMNS).copy()
    out["band"] = out["band"].astype(str)
    return out.reset_index(drop=True)


def rollouts_in(rollouts: pd.DataFrame, difficulty: pd.DataFrame) -> pd.DataFrame:
    """The rollouts behind the rows of a (band-filtered) difficulty frame."""
    if rollouts.empty or difficulty.empty:
        return rollouts.iloc[0:0]
    keys = set(zip(difficulty["task_id"], difficulty["agent"], difficulty["model"]))
    mine = [(t, a, _model(m)) in keys for t, a, m in zip(rollouts["task_id"], rollouts["agent"], rollouts["model"])]
    return rollouts[mine]


def run_labels(rollouts: pd.DataFrame, runs: pd.DataFrame) -> dict[str, str]:
    """Batch id -> "id · agent model · n rollouts" for the run picker: the batches that have
    rollouts, newest first (`runs` as workbench.store.rollouts.runs lists them); a batch the runs
    table does not know (rows written without one) reads as its id, last."""
    present = set(rollouts["run_id"].dropna()) if len(rollouts) else set()
    out = {}
    for r in runs.itertuples():
        if r.run_id in present:
            model = f" {r.model}" if isinstance(r.model, str) and r.model else ""
            out[r.run_id] = f"{r.run_id} · {r.agent}{model} · {int(r.n_done)} rollouts"
    return out | {rid: rid for rid in sorted(present - set(out))}


def most_rollouts(rollouts: pd.DataFrame) -> int:
    """The most rollouts any task has from one agent config: the largest k pass@k can take (≥ 1)."""
    if rollouts.empty:
        return 1
    return int(_with_agents(rollouts).groupby(["task_id", "agent", "model"]).size().max())


# --- export ------------------------------------------------------------------------------------

EXPORT_COLUMNS = ["task_id", "task_name", "agent", "model", "rollouts", "passed", "pass@1", "k", "pass@k", "band",
                  "category", "n_steps", "provider", "sampler"]


def selected_task_ids(difficulty: pd.DataFrame) -> list[str]:
    """The selection's tasks, once each, in the table's order."""
    return list(dict.fromkeys(difficulty["task_id"])) if len(difficulty) else []


def export_csv(difficulty: pd.DataFrame) -> bytes:
    return difficulty.reindex(columns=EXPORT_COLUMNS).to_csv(index=False).encode()


def export_json(difficulty: pd.DataFrame) -> bytes:
    """{"task_ids": [...], "rows": [one per task and agent config]} (NaN as null)."""
    rows = difficulty.reindex(columns=EXPORT_COLUMNS).astype(object)
    rows = rows.where(pd.notna(rows), None)
    rows["band"] = rows["band"].map(lambda b: None if b is None else str(b))
    return json.dumps({"task_ids": selected_task_ids(difficulty), "rows": rows.to_dict("records")},
                      indent=1, default=str).encode()


def rollout_command(task_ids: Sequence[str], agent: str = "terminus-2", k: int = 3, model: str | None = None) -> str:
    """The `workbench rollout` command that runs these tasks again (another agent, more samples)."""
    if not task_ids:
        return ""
    model_arg = f" --model {model}" if model else ""
    return f"workbench rollout --tasks {' '.join(task_ids)} --agent {agent}{model_arg} -k {k}"
