"""What difficulty evolution did (SETA-Evol, PAPERS.md §2): each variant's pass rate beside its
parent's, per operator the rate before → after and how many variants were made and accepted,
per round the share of tasks in the productive zone (0 < r < 1), and a root's lineage tree.

Pure functions of the frames `workbench.store.lineage.lineage_frame` and
`workbench.store.rollouts.rollouts_frame` return: nothing here reads the store or imports
Streamlit, so the notebook uses it too. The figures are in analysis/evolution_figures.py.

A task's pass rate r is passed / rollouts of one agent config (agent + model) over the task's
stored rollouts, as the evolve driver counts it (analysis/difficulty's pass@1). "Before" is the
parent's rate by the chosen config now; the rate that chose the operator when the round ran is
kept beside it (`chose_r`): the two differ when the parent got more rollouts since, or when
another agent is chosen.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pandas as pd

from analysis import difficulty as d
from pipeline.agents.protocol import AGENT_LABELS
from pipeline.evolve.models import (LINEAGE_MARKS, NOT_COUNTED, OPERATORS, PRODUCTIVE_ZONE, generation, lineage,
                                    productive)
from workbench import double_rule

# What SETA-Evol expects each operator to do to r, for captions and the summary table.
EXPECTED = {"harder": "lowers r", "context_switch": "keeps r about the same", "easier": "raises r"}
SETA_EXPECTATION = ("SETA-Evol's expectation: harder lowers the pass rate, easier raises it, a context switch "
                    "keeps it about the same (another tool or domain at the same difficulty).")
OPERATOR_COLORS = {"harder": "#d7301f", "context_switch": "#fdae61", "easier": "#2c7bb6"}
# An attempt's outcome as tables and the tree show it: the variant's verdict once it was made.
OUTCOMES = ("accepted", "rejected", "not verified", "no variant", "failed")
MADE = OUTCOMES[:3]                  # the outcomes of an attempt that made a variant
ORIGINAL = "original"
NO_MODEL = ""

RATE_COLUMNS = ["task_id", "rollouts", "passed", "r"]
VARIANT_COLUMNS = ["task_id", "parent_id", "root_id", "operator", "mark", "round", "run_id", "provider", "change",
                   "outcome", "chose_r", "r_before", "r_after", "rollouts_after", "error"]
SUMMARY_COLUMNS = ["operator", "tried", "made", "accepted", "no_variant", "failed", "rated", "r_before", "r_after",
                   "delta", "expected"]
SHARE_COLUMNS = ["round", "tasks", "productive", "share", "unrated"]
ROUND_COLUMNS = ["round", "operator", "rated", "r_before", "r_after"]
NODE_COLUMNS = ["task_id", "parent_id", "operator", "mark", "generation", "round", "r", "rollouts", "outcome",
                "change", "x", "y"]


# --- whose rates ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class AgentConfig:
    """One agent config whose rollouts give the pass rates, as the evolve driver tells them apart:
    agent and model ("" for none); an agent without a model also by the label its rollouts are
    stored under (noisy-oracle's carries its p, so rates at p = 0.8 and 0.5 stay apart)."""
    agent: str
    model: str = NO_MODEL
    stored_label: str = ""

    @property
    def label(self) -> str:
        return self.stored_label or d.agent_label(self.agent, self.model or None)

    @property
    def simulated(self) -> bool:
        """Its rates are simulated, not a model's (noisy-oracle): every figure says so in its label."""
        return double_rule.is_simulated_agent(self.agent)


def _configs_of(rollouts: pd.DataFrame) -> list[AgentConfig]:
    """The config of each rollout, row by row."""
    models = [m if isinstance(m, str) else NO_MODEL for m in rollouts["model"]]
    stored = rollouts["agent_label"] if "agent_label" in rollouts else [""] * len(rollouts)
    return [AgentConfig(a, m, "" if m or not isinstance(s, str) else s)
            for a, m, s in zip(rollouts["agent"], models, stored)]


def agent_configs(rollouts: pd.DataFrame, task_ids: Sequence[str] | None = None) -> list[AgentConfig]:
    """The agent configs with rollouts (on these tasks), in the protocol's order, then by model and label."""
    if rollouts.empty:
        return []
    mine = rollouts if task_ids is None else rollouts[rollouts["task_id"].isin(set(task_ids))]
    order = {a: i for i, a in enumerate(AGENT_LABELS)}
    return sorted(set(_configs_of(mine)), key=lambda c: (order.get(c.agent, 99), c.agent, c.model, c.stored_label))


def default_config(configs: Sequence[AgentConfig], wanted: AgentConfig) -> int:
    """The index of `wanted` (an evolve run's config) among `configs`; else the first of its agent
    and model, else of its agent, else 0."""
    for same in (lambda c: c == wanted, lambda c: (c.agent, c.model) == (wanted.agent, wanted.model),
                 lambda c: c.agent == wanted.agent):
        hit = next((i for i, c in enumerate(configs) if same(c)), None)
        if hit is not None:
            return hit
    return 0


def pass_rates(rollouts: pd.DataFrame, config: AgentConfig) -> pd.DataFrame:
    """r = passed / rollouts per task over the rollouts of one agent config, leaving out those the
    driver leaves out (pipeline.evolve.models.NOT_COUNTED: a crashed worker says nothing of the task)."""
    if rollouts.empty:
        return pd.DataFrame(columns=RATE_COLUMNS)
    mine = rollouts[[c == config for c in _configs_of(rollouts)]]
    mine = mine[~mine["failure_class"].isin(NOT_COUNTED)]
    out = mine.groupby("task_id", sort=True)["passed"].agg(rollouts="size", passed="sum").reset_index()
    out["passed"] = out["passed"].astype(int)
    out["r"] = out["passed"] / out["rollouts"]
    return out[RATE_COLUMNS]


def _rate_of(rates: pd.DataFrame) -> dict[str, float]:
    return dict(zip(rates["task_id"], rates["r"]))


# --- per variant ---------------------------------------------------------------------------------

def outcome(status: str, verdict: object) -> str:
    """made → the variant's verdict (not verified while it has none); else the attempt's status."""
    if status == "made":
        return verdict if isinstance(verdict, str) and verdict else "not verified"
    return "no variant" if status == "no_variant" else "failed"


def mark(task_id: str) -> str:
    """The last lineage mark of an id ("d1" for `t__b1__d1`), ORIGINAL for an original."""
    marks = lineage(task_id)
    if not marks:
        return ORIGINAL
    op, n = marks[-1]
    return f"{LINEAGE_MARKS[op]}{n}"


def what_changed(row) -> str:
    """The attempt's line: the change a variant made, else why none was made (the error)."""
    change = getattr(row, "change", "")
    if isinstance(change, str) and change:
        return change
    error = getattr(row, "error", None)
    return f"not made: {error}" if isinstance(error, str) and error else ""


def variants_frame(lineage_rows: pd.DataFrame, rates: pd.DataFrame) -> pd.DataFrame:
    """One row per variant tried: parent, operator, round, change, outcome, the rate that chose the
    operator (chose_r), the parent's rate (r_before) and the variant's (r_after, NaN while it has
    no rollouts by the config) with its rollouts. By root, round, id."""
    if lineage_rows.empty:
        return pd.DataFrame(columns=VARIANT_COLUMNS)
    r = _rate_of(rates)
    n = dict(zip(rates["task_id"], rates["rollouts"]))
    df = lineage_rows.copy()
    df["mark"] = df["task_id"].map(mark)
    df["outcome"] = [outcome(s, v) for s, v in zip(df["status"], df.get("verdict", pd.Series(None, index=df.index)))]
    df["chose_r"] = df["parent_pass_rate"].astype(float)
    df["r_before"] = df["parent_id"].map(lambda t: r.get(t, np.nan)).astype(float)
    made = df["status"] == "made"
    df["r_after"] = [r.get(t, np.nan) if m else np.nan for t, m in zip(df["task_id"], made)]
    df["rollouts_after"] = [int(n.get(t, 0)) if m else 0 for t, m in zip(df["task_id"], made)]
    df["round"] = df["round"].astype(int)
    df["change"] = [what_changed(row) for row in df.itertuples()]
    if "error" not in df:
        df["error"] = None
    return df.sort_values(["root_id", "round", "task_id"], kind="stable")[VARIANT_COLUMNS].reset_index(drop=True)


def rated(variants: pd.DataFrame) -> pd.DataFrame:
    """The variants with a rate before and after: the pairs a before → after comparison is over."""
    return variants[variants["r_before"].notna() & variants["r_after"].notna()]


# --- per operator and round ------------------------------------------------------------------------

def operator_summary(variants: pd.DataFrame) -> pd.DataFrame:
    """Per operator (every one, zeros included): variants tried, made, accepted, no_variant, failed;
    over the rated pairs, the mean r before and after and their difference, beside SETA's expectation."""
    rows = []
    pairs = rated(variants)
    for op in OPERATORS:
        mine = variants[variants["operator"] == op]
        both = pairs[pairs["operator"] == op]
        before = float(both["r_before"].mean()) if len(both) else np.nan
        after = float(both["r_after"].mean()) if len(both) else np.nan
        rows.append({"operator": op, "tried": len(mine), "made": int(mine["outcome"].isin(MADE).sum()),
                     "accepted": int((mine["outcome"] == "accepted").sum()),
                     "no_variant": int((mine["outcome"] == "no variant").sum()),
                     "failed": int((mine["outcome"] == "failed").sum()), "rated": len(both),
                     "r_before": before, "r_after": after, "delta": after - before, "expected": EXPECTED[op]})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def rates_by_round(variants: pd.DataFrame) -> pd.DataFrame:
    """Per round and operator (those with rated pairs): how many, mean r before and after."""
    pairs = rated(variants)
    if pairs.empty:
        return pd.DataFrame(columns=ROUND_COLUMNS)
    out = pairs.groupby(["round", "operator"], sort=True).agg(
        rated=("task_id", "size"), r_before=("r_before", "mean"), r_after=("r_after", "mean")).reset_index()
    out["_o"] = out["operator"].map(OPERATORS.index)
    return out.sort_values(["round", "_o"]).drop(columns="_o").reset_index(drop=True)[ROUND_COLUMNS]


def round_tasks(lineage_rows: pd.DataFrame) -> dict[int, list[str]]:
    """The tasks of each round: round 0 the originals the first round evolved (its parents), round n
    the variants round n made that were accepted (the ones rolled out and evolved further)."""
    if lineage_rows.empty:
        return {}
    out = {0: sorted(set(lineage_rows.loc[lineage_rows["round"] == lineage_rows["round"].min(), "parent_id"]))}
    made = lineage_rows[(lineage_rows["status"] == "made") & (lineage_rows["verdict"] == "accepted")]
    for rnd, g in made.groupby("round"):
        out[int(rnd)] = sorted(g["task_id"])
    return out


def productive_share(lineage_rows: pd.DataFrame, rates: pd.DataFrame) -> pd.DataFrame:
    """Per round (0 = the originals): its tasks with a rate, how many lie in the productive zone
    (0 < r < 1, pipeline.evolve.models.productive), their share, and the tasks without a rate."""
    r = _rate_of(rates)
    rows = []
    for rnd, tasks in sorted(round_tasks(lineage_rows).items()):
        have = [r[t] for t in tasks if t in r]
        n_prod = sum(productive(x) for x in have)
        rows.append({"round": rnd, "tasks": len(have), "productive": n_prod,
                     "share": n_prod / len(have) if have else np.nan, "unrated": len(tasks) - len(have)})
    return pd.DataFrame(rows, columns=SHARE_COLUMNS)


# --- the lineage tree of a root ------------------------------------------------------------------------

@dataclass
class LineageTree:
    """A root and every variant tried below it: nodes (NODE_COLUMNS, with a tree layout x =
    generation, y = leaf order) and edges parent → variant."""
    root: str
    nodes: pd.DataFrame
    edges: list[tuple[str, str]]


def roots(lineage_rows: pd.DataFrame) -> list[str]:
    """The originals with variants tried, most variants first."""
    if lineage_rows.empty:
        return []
    counts = lineage_rows.groupby("root_id").size()
    return sorted(counts.index, key=lambda t: (-counts[t], t))


def root_labels(lineage_rows: pd.DataFrame, tasks: pd.DataFrame) -> dict[str, str]:
    """Root id -> "id · name · n variants tried" for the tree's picker, in `roots` order (`tasks`:
    workbench.store.tasks.tasks_frame; a root it lacks reads without a name)."""
    names = dict(zip(tasks["task_id"], tasks["name"])) if len(tasks) else {}
    counts = lineage_rows.groupby("root_id").size() if len(lineage_rows) else {}
    return {r: " · ".join([r, *([names[r]] if isinstance(names.get(r), str) else []), f"{counts[r]} tried"])
            for r in roots(lineage_rows)}


def lineage_tree(lineage_rows: pd.DataFrame, rates: pd.DataFrame, root: str) -> LineageTree:
    """The tree of `root`: the original, then each variant tried under its parent."""
    mine = lineage_rows[lineage_rows["root_id"] == root]
    if mine.empty:
        raise ValueError(f"no variants were tried of {root!r}: pick one of {', '.join(roots(lineage_rows)[:5])}")
    r = _rate_of(rates)
    n = dict(zip(rates["task_id"], rates["rollouts"]))
    g = nx.DiGraph()
    g.add_node(root, parent_id=None, operator=None, round=0, outcome=ORIGINAL, change="the original task")
    for row in mine.itertuples():
        g.add_node(row.task_id, parent_id=row.parent_id, operator=row.operator, round=int(row.round),
                   outcome=outcome(row.status, getattr(row, "verdict", None)), change=what_changed(row))
    for row in mine.itertuples():
        if row.parent_id not in g:      # a parent outside this frame (another run's variant): its id stands in
            g.add_node(row.parent_id, parent_id=None, operator=None, round=int(row.round) - 1, outcome="",
                       change="")
        g.add_edge(row.parent_id, row.task_id)
    pos = _tree_layout(g, root)
    rows = []
    for t in nx.dfs_preorder_nodes(g, root, sort_neighbors=sorted):
        a = g.nodes[t]
        has_rate = t in r and a["outcome"] not in ("no variant", "failed")
        rows.append({"task_id": t, "parent_id": a["parent_id"], "operator": a["operator"], "mark": mark(t),
                     "generation": generation(t), "round": a["round"], "r": r[t] if has_rate else np.nan,
                     "rollouts": int(n.get(t, 0)) if has_rate else 0, "outcome": a["outcome"],
                     "change": a["change"], "x": pos[t][0], "y": pos[t][1]})
    edges = [(u, v) for u, v in nx.dfs_edges(g, root, sort_neighbors=sorted)]
    return LineageTree(root, pd.DataFrame(rows, columns=NODE_COLUMNS), edges)


def _tree_layout(g: nx.DiGraph, root: str) -> dict[str, tuple[float, float]]:
    """x = depth below the root; each leaf its own row (top down, in id order), a parent centred
    on its children — a tidy tree, so no two nodes overlap however the tree branches."""
    depth = nx.single_source_shortest_path_length(g, root)
    pos: dict[str, tuple[float, float]] = {}
    leaves = 0
    for t in nx.dfs_postorder_nodes(g, root, sort_neighbors=sorted):
        kids = sorted(g.successors(t))
        if kids:
            y = float(np.mean([pos[k][1] for k in kids]))
        else:
            y, leaves = float(-leaves), leaves + 1
        pos[t] = (float(depth[t]), y)
    return pos


# --- the page's table ------------------------------------------------------------------------------------

TABLE_COLUMNS = ["task_id", "parent_id", "operator", "round", "change", "outcome", "r_before", "r_after",
                 "rollouts_after", "chose_r", "provider", "run_id"]


def variants_table(variants: pd.DataFrame, outcomes: Sequence[str] = (), operators: Sequence[str] = ()) -> pd.DataFrame:
    """The variants as the page's table shows them, optionally only some outcomes / operators."""
    out = variants
    if outcomes:
        out = out[out["outcome"].isin(outcomes)]
    if operators:
        out = out[out["operator"].isin(operators)]
    return out.reindex(columns=TABLE_COLUMNS).reset_index(drop=True)


def rate_text(r: float) -> str:
    """A rate as a label reads it: "0.75", or "—" for no rollouts."""
    return "—" if r is None or (isinstance(r, float) and np.isnan(r)) else f"{r:.2f}"


def zone_caption(config: AgentConfig) -> str:
    sim = " These rates are simulated (noisy-oracle), not a model's." if config.simulated else ""
    return (f"The productive zone is {PRODUCTIVE_ZONE}: some rollouts pass, some fail, so the task still teaches. "
            f"Round 0 is the originals the first round evolved; round n the variants round n made and verification "
            f"accepted.{sim}")
