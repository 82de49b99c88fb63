"""Why rollouts fail: failure classes by agent, near-misses (FACET), the tests that fail most,
a task × test heatmap, and which tests a task fails consistently or only sometimes.

Pure functions of the frames `workbench.store.rollouts` returns (`rollouts_frame`: one row per
rollout; `test_outcomes`: one row per rollout and test), shared by the Failures page, the
trajectory judge (pipeline/judge) and notebooks. No SQL, no Streamlit.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from analysis.display import short, short_unique
from analysis.figures import clear_of_toolbar, count_ticks
from pipeline.agents.protocol import AGENT_LABELS, FAILURE_CLASSES
from workbench import double_rule

# A test outcome that counts against the rollout (pytest's "error" is a failing fixture or
# collection: the check did not pass either). "skipped" counts neither way.
FAILING_OUTCOMES = ("failed", "error")
# FACET's near-miss: a failed rollout that misses only one or two checks (54% of theirs).
NEAR_MISS_MAX_FAILED = 2
# The heatmap stays readable (and its figure small) with at most this many rows and columns:
# the tasks and tests with the most failures are kept.
HEATMAP_MAX_TASKS = 40
HEATMAP_MAX_TESTS = 40
CLASS_ORDER = list(FAILURE_CLASSES)
CLASS_LABELS = {
    "timeout": "timeout (agent ran out of time)",
    "never_completed": "never completed (max turns, no task_complete)",
    "parse_errors": "parse errors (replies the agent could not read)",
    "test_assertion": "test assertion (completed, tests failed)",
    "crashed": "crashed (the harness or container failed)",
    "verifier_error": "verifier error (no believable test result)",
    "script_failed": "script failed (a scripted agent's script exited non-zero)",
    "stopped": "stopped (the batch was cancelled)",
}


# --- labels and filters ------------------------------------------------------------------------

def agent_label(agent: str, stored: object = None, models: object = None) -> str:
    """What a page shows for an agent: AGENT_LABELS (probes say they are probes), else the label
    the rollout was stored with (an imported Harbor agent), else the name. `models` (one name or
    several): the models its rollouts ran against; an LLM agent whose runs all talked to a test
    double says so, one with some says some did (workbench.double_rule, the one rule)."""
    base = AGENT_LABELS[agent] if agent in AGENT_LABELS else (
        str(stored) if isinstance(stored, str) and stored else str(agent))
    return double_rule.agent_config_label(agent, base, models)


def agent_labels(rollouts: pd.DataFrame) -> dict[str, str]:
    """{agent: label} for the agents present, in AGENTS' order then by name."""
    if rollouts.empty:
        return {}
    stored = rollouts.drop_duplicates("agent").set_index("agent")["agent_label"].to_dict()
    models = (rollouts.groupby("agent")["model"].agg(lambda s: sorted({m for m in s if isinstance(m, str)}))
              if "model" in rollouts else {})
    order = {a: i for i, a in enumerate(AGENT_LABELS)}
    return {a: agent_label(a, stored.get(a), models.get(a))
            for a in sorted(stored, key=lambda a: (order.get(a, 99), a))}


def _model_of(value: object) -> str:
    return value if isinstance(value, str) and value else "(no model)"


def model_options(rollouts: pd.DataFrame) -> list[str]:
    """The models present; scripted agents (no model) read '(no model)'."""
    return sorted({_model_of(m) for m in rollouts.get("model", pd.Series(dtype=object))})


def filter_rollouts(rollouts: pd.DataFrame, *, agents: Sequence[str] = (), models: Sequence[str] = (),
                    runs: Sequence[str] = (), tasks: Sequence[str] = ()) -> pd.DataFrame:
    """The rollouts matching every non-empty selection (an empty one keeps all)."""
    keep = pd.Series(True, index=rollouts.index)
    if agents:
        keep &= rollouts["agent"].isin(agents)
    if models:
        keep &= rollouts["model"].map(_model_of).isin(models)
    if runs:
        keep &= rollouts["run_id"].isin(runs)
    if tasks:
        keep &= rollouts["task_id"].isin(tasks)
    return rollouts[keep]


def tests_of(tests: pd.DataFrame, rollouts: pd.DataFrame) -> pd.DataFrame:
    """The test outcomes of these rollouts only."""
    return tests[tests["rollout_id"].isin(rollouts["rollout_id"])]


def is_failing(outcomes: pd.Series) -> pd.Series:
    return outcomes.isin(FAILING_OUTCOMES)


# --- failure classes ---------------------------------------------------------------------------

def failure_class_counts(rollouts: pd.DataFrame) -> pd.DataFrame:
    """Failed rollouts per agent and failure class: agent, agent_label, failure_class, rollouts,
    share (of the agent's rollouts, passed ones included). Classes in FAILURE_CLASSES' order; a
    class outside it (a newer writer) is kept after them."""
    cols = ["agent", "agent_label", "failure_class", "rollouts", "share"]
    failed = rollouts[~rollouts["passed"].astype(bool)] if not rollouts.empty else rollouts
    if failed.empty:
        return pd.DataFrame(columns=cols)
    totals = rollouts.groupby("agent").size()
    out = failed.groupby(["agent", "failure_class"]).size().rename("rollouts").reset_index()
    labels = agent_labels(rollouts)
    out["agent_label"] = out["agent"].map(labels)
    out["share"] = out["rollouts"] / out["agent"].map(totals)
    rank = {c: i for i, c in enumerate(CLASS_ORDER)}
    out["_rank"] = out["failure_class"].map(lambda c: rank.get(c, len(rank)))
    agent_rank = {a: i for i, a in enumerate(labels)}
    out["_agent"] = out["agent"].map(agent_rank)
    return out.sort_values(["_agent", "_rank", "failure_class"])[cols].reset_index(drop=True)


def failure_class_figure(counts: pd.DataFrame) -> go.Figure:
    """Stacked horizontal bars: failed rollouts per agent (labelled), split by failure class."""
    order = [c for c in CLASS_ORDER if c in set(counts["failure_class"])]
    order += sorted(set(counts["failure_class"]) - set(order))
    fig = px.bar(counts, x="rollouts", y="agent_label", color="failure_class", orientation="h",
                 category_orders={"failure_class": order},
                 labels={"agent_label": "", "failure_class": "failure class"},
                 hover_data={"share": ":.0%"})
    fig.for_each_trace(lambda t: t.update(name=CLASS_LABELS.get(t.name, t.name)))
    fig.update_layout(height=max(220, 48 * counts["agent_label"].nunique() + 120), barmode="stack",
                      margin=dict(l=0, r=0, t=10, b=0), xaxis_title="failed rollouts",
                      legend=dict(orientation="h", y=-0.3, title_text=""))   # the axis title sat on it
    fig.update_xaxes(**count_ticks(float(counts.groupby("agent_label")["rollouts"].sum().max())))
    return clear_of_toolbar(fig)


# --- near-misses -------------------------------------------------------------------------------

@dataclass(frozen=True)
class NearMisses:
    """`failed`: failed rollouts; `with_tests`: of them, those whose tests ran (a crash or timeout
    before the verifier reports none, so it cannot be near or far); `near`: of those, the ones
    that missed 1..NEAR_MISS_MAX_FAILED tests. `share` = near / with_tests (None when 0)."""
    failed: int
    with_tests: int
    near: int

    @property
    def share(self) -> float | None:
        return self.near / self.with_tests if self.with_tests else None


def _failed_with_tests(rollouts: pd.DataFrame) -> pd.DataFrame:
    if rollouts.empty:
        return rollouts
    failed = rollouts[~rollouts["passed"].astype(bool)]
    return failed[(failed["n_tests"] > 0) & (failed["n_failed"] > 0)]


def near_misses(rollouts: pd.DataFrame) -> NearMisses:
    failed = int((~rollouts["passed"].astype(bool)).sum()) if not rollouts.empty else 0
    ran = _failed_with_tests(rollouts)
    near = int((ran["n_failed"] <= NEAR_MISS_MAX_FAILED).sum()) if not ran.empty else 0
    return NearMisses(failed=failed, with_tests=len(ran), near=near)


def near_miss_rollouts(rollouts: pd.DataFrame) -> pd.DataFrame:
    """The near-miss rollouts themselves, fewest failed tests first."""
    ran = _failed_with_tests(rollouts)
    if ran.empty:
        return ran
    return ran[ran["n_failed"] <= NEAR_MISS_MAX_FAILED].sort_values(["n_failed", "task_id", "agent", "sample"])


def missed_tests_histogram(rollouts: pd.DataFrame) -> pd.DataFrame:
    """Failed rollouts (whose tests ran) by how many tests they missed: n_failed, rollouts, near."""
    ran = _failed_with_tests(rollouts)
    if ran.empty:
        return pd.DataFrame(columns=["n_failed", "rollouts", "near"])
    out = ran.groupby("n_failed").size().rename("rollouts").reset_index()
    out["near"] = out["n_failed"] <= NEAR_MISS_MAX_FAILED
    return out


NEAR_COLORS = {True: "#f9a825", False: "#c62828"}


def missed_tests_figure(hist: pd.DataFrame) -> go.Figure:
    """Failed rollouts by tests missed, near-misses in amber and the rest in red, each colour named
    in a legend (one colour per bar, unexplained, was what the walk found)."""
    fig = go.Figure()
    for near, name in ((True, f"near-miss (missed {NEAR_MISS_MAX_FAILED} tests or fewer)"), (False, "missed more")):
        part = hist[hist["near"].astype(bool) == near]
        if len(part):
            fig.add_bar(x=part["n_failed"].astype(int), y=part["rollouts"], name=name, marker_color=NEAR_COLORS[near],
                        hovertemplate="%{y} rollouts missed %{x} tests<extra></extra>")
    fig.update_layout(height=280, margin=dict(l=0, r=0, t=10, b=0), xaxis_title="tests missed",
                      yaxis_title="failed rollouts", xaxis=dict(dtick=1), showlegend=True,
                      legend=dict(orientation="h", x=0, y=1.02, yanchor="bottom", title_text=""))
    fig.update_yaxes(**count_ticks(float(hist["rollouts"].max()) if len(hist) else 0))
    return clear_of_toolbar(fig)


# --- tests that fail ---------------------------------------------------------------------------

def fail_counts_by_test(tests: pd.DataFrame) -> pd.DataFrame:
    """Per task and test: rollouts that reported it (`runs`), failed it (`failed`), `fail_rate`."""
    cols = ["task_id", "test_name", "runs", "failed", "fail_rate"]
    if tests.empty:
        return pd.DataFrame(columns=cols)
    t = tests.assign(_fail=is_failing(tests["outcome"]))
    out = t.groupby(["task_id", "test_name"]).agg(runs=("rollout_id", "nunique"), failed=("_fail", "sum"))
    out = out.reset_index()
    out["failed"] = out["failed"].astype(int)
    out["fail_rate"] = out["failed"] / out["runs"]
    return out[cols]


def most_failing_tests(tests: pd.DataFrame, task_names: Mapping[str, str] | None = None,
                       top: int = 20) -> pd.DataFrame:
    """The tests failed in the most rollouts (ties: higher rate, then name); with the task's name."""
    counts = fail_counts_by_test(tests)
    counts = counts[counts["failed"] > 0]
    counts = counts.sort_values(["failed", "fail_rate", "task_id", "test_name"],
                                ascending=[False, False, True, True]).head(top)
    counts.insert(1, "task", counts["task_id"].map(lambda t: (task_names or {}).get(t, t)))
    return counts.reset_index(drop=True)


def _most_first(totals: pd.Series) -> pd.Series:
    """Largest first, ties by name (the same figure on every run)."""
    order = sorted(totals.index, key=lambda k: (-totals[k], str(k)))
    return totals.reindex(order)


def heatmap_matrix(tests: pd.DataFrame, max_tasks: int = HEATMAP_MAX_TASKS,
                   max_tests: int = HEATMAP_MAX_TESTS) -> pd.DataFrame:
    """Fail rate per task (rows) and test (columns); NaN where the task has no such test. Only
    tasks and tests with a failure, the most failing ones first, at most max_tasks × max_tests."""
    counts = fail_counts_by_test(tests)
    counts = counts[counts["failed"] > 0]
    if counts.empty:
        return pd.DataFrame()
    tasks = _most_first(counts.groupby("task_id")["failed"].sum())
    names = _most_first(counts.groupby("test_name")["failed"].sum())
    keep = counts[counts["task_id"].isin(tasks.index[:max_tasks]) & counts["test_name"].isin(names.index[:max_tests])]
    rates = fail_counts_by_test(tests)  # passed-everywhere cells of kept rows/columns read 0, not blank
    rates = rates[rates["task_id"].isin(keep["task_id"]) & rates["test_name"].isin(keep["test_name"])]
    matrix = rates.pivot(index="task_id", columns="test_name", values="fail_rate")
    return matrix.reindex(index=[t for t in tasks.index if t in matrix.index],
                          columns=[n for n in names.index if n in matrix.columns])


def heatmap_figure(matrix: pd.DataFrame, task_names: Mapping[str, str] | None = None) -> go.Figure:
    """The task × test heatmap: red = failed in every rollout that ran the test."""
    rows = [short((task_names or {}).get(t, t), 40) for t in matrix.index]
    cols = short_unique((str(c).split("::")[-1] for c in matrix.columns), 32)
    fig = go.Figure(go.Heatmap(z=matrix.to_numpy(dtype=float), x=cols, y=rows, zmin=0, zmax=1,
                               colorscale=[[0, "#e8f5e9"], [0.5, "#f9a825"], [1, "#c62828"]],
                               colorbar=dict(title="fail rate", tickformat=".0%"),
                               customdata=[[[t, c] for c in matrix.columns] for t in matrix.index],
                               hovertemplate="%{customdata[0]}<br>%{customdata[1]}<br>fails in %{z:.0%} of "
                                             "rollouts<extra></extra>"))
    # upright labels, one per column: at -35 degrees each ran into its neighbours'; a column is
    # labelled by the test's own name ("test_outputs.py::test_sum" -> "test_sum"), the hover has it whole
    fig.update_layout(height=max(260, 22 * len(rows) + 8 * max(map(len, cols), default=0) + 60),
                      margin=dict(l=0, r=0, t=10, b=0), yaxis=dict(autorange="reversed"),
                      xaxis=dict(tickangle=-90, tickfont=dict(size=11), automargin=True))
    return clear_of_toolbar(fig)



# --- consistent vs sporadic --------------------------------------------------------------------

@dataclass
class FailingTests:
    """One task's failing tests over the rollouts given: `consistent` failed in every rollout that
    ran them, `sporadic` in some. `rollouts`: rollouts of the task with test results."""
    task_id: str
    rollouts: int
    consistent: list[str] = field(default_factory=list)
    sporadic: list[str] = field(default_factory=list)


def failing_test_kinds(tests: pd.DataFrame) -> pd.DataFrame:
    """Per task and test: runs, failed, and `kind` — consistent (failed in every rollout that ran
    it), sporadic (in some), never. The trajectory judge reads this (SETA: a test every rollout
    fails points at the task more than at the agents)."""
    counts = fail_counts_by_test(tests)
    if counts.empty:
        return counts.assign(kind=pd.Series(dtype=object))
    counts["kind"] = ["never" if f == 0 else "consistent" if f == r else "sporadic"
                      for f, r in zip(counts["failed"], counts["runs"])]
    return counts


def consistency_by_task(tests: pd.DataFrame, task_ids: Iterable[str] | None = None) -> dict[str, FailingTests]:
    """{task_id: FailingTests} of the tasks in `tests` (or of `task_ids`; one with no test
    results gets an empty entry)."""
    kinds = failing_test_kinds(tests)
    wanted = list(task_ids) if task_ids is not None else sorted(set(tests["task_id"]))
    out = {}
    for task_id in wanted:
        mine = kinds[kinds["task_id"] == task_id].sort_values("test_name")
        n = tests.loc[tests["task_id"] == task_id, "rollout_id"].nunique()
        out[task_id] = FailingTests(task_id, int(n),
                                       mine.loc[mine["kind"] == "consistent", "test_name"].tolist(),
                                       mine.loc[mine["kind"] == "sporadic", "test_name"].tolist())
    return out


# --- one rollout -------------------------------------------------------------------------------

def rollout_tests(tests: pd.DataFrame, rollout_id: str) -> pd.DataFrame:
    """One rollout's tests, failing ones first: test_name, outcome, message."""
    mine = tests[tests["rollout_id"] == rollout_id]
    mine = mine.assign(_ok=~is_failing(mine["outcome"])).sort_values(["_ok", "test_name"])
    return mine[["test_name", "outcome", "message"]].reset_index(drop=True)


def drilldown_order(rollouts: pd.DataFrame) -> list[str]:
    """The rollout picker's order: failed before passed, then by task, agent and sample; the first
    is what the drill-down opens on."""
    order = rollouts.assign(_ok=rollouts["passed"].astype(bool)).sort_values(["_ok", "task_id", "agent", "sample"])
    return order["rollout_id"].tolist()


def rollout_label(row: Mapping | pd.Series, task_names: Mapping[str, str] | None = None) -> str:
    """'task · agent #sample · failure class, n/m tests failed · id' (passed: 'passed, m tests') for a picker."""
    task = (task_names or {}).get(row["task_id"], row.get("task_name") or row["task_id"])
    n = int(row["n_tests"] or 0)
    if bool(row["passed"]):
        verdict, tests = "passed", f", {n} tests" if n else ""
    else:
        verdict, tests = str(row["failure_class"]), f", {int(row['n_failed'])}/{n} tests failed" if n else ""
    return f"{short(task, 40)} · {row['agent']} #{int(row['sample'])} · {verdict}{tests} · {row['rollout_id']}"
