"""Store reads for the pages, kept in Streamlit's cache until the store changes.

Each query here is a `workbench.store` function `fn(db, *args)` called as `fn(ws, *args)`.
Its results are cached under the workspace's data revision (`workbench.store.revision`):
any committed write, by the dashboard or by a CLI process, gives a new revision, so an
edit shows up on the next render, while an unchanged store is read from memory (a few
`stat` calls instead of a DuckDB connection and a query per table).
"""
from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from analysis import scenario_map
from workbench.store import curation, export_rows, revision
from workbench.store import graph as graph_store
from workbench.store import lineage as lineage_store
from workbench.store import llm_calls
from workbench.store import repairs as repair_store
from workbench.store import rollouts as rollout_store
from workbench.store import scenarios as scenario_store
from workbench.store import skills as skill_store
from workbench.store import status as status_store
from workbench.store import strength as strength_store
from workbench.store import task_events
from workbench.store import trajectory_judgements
from workbench.store import tasks as task_store
from workbench.store.connection import Database
from workbench.workspace import Workspace

TTL_S = 3600  # a bound on memory held for a workspace nobody looks at; correctness is the revision's job


def store_query(fn: Callable[..., Any], max_entries: int = 8) -> Callable[..., Any]:
    """`fn(db, *args)` as `query(ws, *args)`, cached per (workspace, revision, args).

    Kept as objects (`cache_resource`) and handed out as copies: `cache_data` pickles, and
    unpickling the skills table (20k rows with list columns) took 0.5 s, more than the query;
    a copy takes milliseconds and leaves the cached value untouched by what a page does."""
    def run(db_path: str, rev: str, *args, **kwargs):
        return fn(Database(Path(db_path)), *args, **kwargs)
    # Streamlit keys a cache on the function's module, qualname and source; the source of
    # `run` is the same for every query, so the qualname carries the query's own name.
    run.__qualname__ = f"store_query[{fn.__module__}.{fn.__qualname__}]"
    cached = st.cache_resource(ttl=TTL_S, max_entries=max_entries, show_spinner=False)(run)

    @functools.wraps(fn)
    def query(ws: Workspace, *args, **kwargs):
        return copy.deepcopy(cached(str(ws.db_path), revision.current(ws.db_path), *args, **kwargs))
    return query


workspace_status = store_query(status_store.workspace_status)
skills_table = store_query(skill_store.skills_table)
deciding_verdicts = store_query(skill_store.deciding_verdicts)
skill_detail = store_query(skill_store.skill_detail, max_entries=64)


def _skill_reasons(db: Database) -> dict[str, str | None]:
    """Why each skill that is not accepted is not: the `reason` of `workbench skills export`."""
    from workbench.cli_export import rules_reason
    return {r.id: r.reason for r in export_rows.skill_rows(db, None, rules_reason)}


skill_reasons = store_query(_skill_reasons)
task_fidelity = store_query(task_store.skill_fidelity, max_entries=64)
ingest_history = store_query(skill_store.ingest_history)
ingest_problems = store_query(skill_store.ingest_problems)
scenarios_for = store_query(scenario_store.scenarios_for, max_entries=64)
failure_for = store_query(scenario_store.failure_for, max_entries=64)
recent_batches = store_query(curation.recent_batches)
last_build = store_query(graph_store.last_build)
clusters_table = store_query(graph_store.clusters_table)
members_table = store_query(graph_store.members_table, max_entries=4)
edit_history = store_query(graph_store.edit_history)
sample_batches = store_query(graph_store.sample_batches)
tasks_frame = store_query(task_store.tasks_frame)
task_runs = store_query(task_store.runs)
checks_for = store_query(task_store.checks_for, max_entries=64)
task_withdrawal = store_query(task_events.withdrawal, max_entries=64)
task_history = store_query(task_events.history, max_entries=64)
task_judgements = store_query(trajectory_judgements.judgements, max_entries=64)
task_strength = store_query(strength_store.strength_for, max_entries=64)
run_strength = store_query(strength_store.strength_frame, max_entries=16)
funnel_counts = store_query(task_store.funnel_counts, max_entries=32)
calls_frame = store_query(llm_calls.calls_frame, max_entries=4)
attempts_for = store_query(repair_store.attempts_for, max_entries=64)
task_stage_costs = store_query(repair_store.stage_costs, max_entries=64)
repair_counts = store_query(repair_store.repair_counts, max_entries=32)


@st.cache_resource(ttl=TTL_S, max_entries=4, show_spinner=False)
def _cluster_labels(db_path: str, rev: str) -> dict[str, str]:
    return scenario_map.cluster_labels(graph_store.clusters_table(Database(Path(db_path))))


def cluster_labels(ws: Workspace) -> dict[str, str]:
    """The cluster picker's labels (0.2-0.5 s for 40k clusters), once per revision."""
    return dict(_cluster_labels(str(ws.db_path), revision.current(ws.db_path)))


# rollouts (the Difficulty, Failures and Rollouts pages)
rollouts_frame = store_query(rollout_store.rollouts_frame)
rollout_tests = store_query(rollout_store.test_outcomes)
rollout_runs = store_query(rollout_store.runs)

# difficulty evolution (the Evolution page)
lineage_frame = store_query(lineage_store.lineage_frame)
evolve_runs = store_query(lineage_store.evolve_runs_frame)
