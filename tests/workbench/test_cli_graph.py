"""`workbench graph stats`, run as a user would (a subprocess), on the demo graph in a real
DuckDB workspace: the JSON keys and figures, the human table, bad input, nothing stored."""
from __future__ import annotations

import json

import pytest

from analysis import graph_health as gh
from pipeline.graph.assemble import assemble
from tests.helpers import cli
from workbench.store import graph as store
from workbench.store.status import workspace_status

FIGURES = ("self_loop_share", "largest_wcc_share", "isolated_share", "mean_path_len",
           "clusters_per_accepted_skill", "max_cluster_share")


def test_graph_stats_json_has_the_figures_counts_targets_and_advice(graph_workspace):
    ws = graph_workspace
    before = (workspace_status(ws.db)["paths"], store.visit_counts(ws.db))
    r = cli("graph", "stats", "--json", "--sample", "150", "--seed", "4", "--workspace", str(ws.root))
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    h = gh.measure(assemble(ws.db), n=150, seed=4)
    for key in FIGURES:
        assert data[key] == pytest.approx(getattr(h, key)), key
    assert data["sample_paths"] == 150 and data["sample_seed"] == 4
    assert data["skills"] == workspace_status(ws.db)["scenarios"]["skills_with_scenarios"]
    assert data["clusters"] == workspace_status(ws.db)["scenarios"]["clusters"]
    assert data["transitions"] >= data["skill_edges"] > 0 and data["bridge_edges"] > 0
    assert set(data["targets"]) == set(gh.TARGETS) and data["advice"] == gh.advice(h)
    assert data["meets"] == {k: t.met(getattr(h, k)) for k, t in gh.TARGETS.items()}
    assert (workspace_status(ws.db)["paths"], store.visit_counts(ws.db)) == before   # a sample, not a batch


def test_graph_stats_table_names_each_figure_its_target_and_the_advice(graph_workspace):
    r = cli("graph", "stats", "--workspace", str(graph_workspace.root))
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    h = gh.measure(assemble(graph_workspace.db))
    for item in gh.card(h):
        assert f"({item.figure})" in text and item.value in text
    for sentence in gh.advice(h):
        assert " ".join(sentence.split()) in text


def test_graph_stats_bad_input_says_what_is_wrong(workspace, graph_workspace):
    r = cli("graph", "stats", "--workspace", str(workspace.root))
    assert r.returncode == 1 and "run `workbench graph build` first" in r.stderr
    r = cli("graph", "stats", "--sample", "0", "--workspace", str(graph_workspace.root))
    assert r.returncode == 2 and "--sample: the sample needs at least one path, got 0" in r.stderr
    r = cli("graph", "stats", "--sample", "many", "--workspace", str(graph_workspace.root))
    assert r.returncode == 2 and "expected a whole number of paths, got 'many'" in r.stderr
