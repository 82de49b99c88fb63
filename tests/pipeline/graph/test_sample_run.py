"""`workbench sample`'s report on a real workspace: paths shorter than --min-len are counted
and explained, in the report, its note (the CLI prints it) and its JSON."""
from __future__ import annotations

import re

import pytest

from pipeline.graph.sample_run import SampleReport, sample
from tests.helpers import cli
from workbench.store import graph as store


# No walk on the demo graph goes on for 60 steps without a revisit, so every path is short.
LONG = "60"


def test_short_paths_are_counted_and_explained_in_the_report(graph_workspace):
    report = sample(graph_workspace, "inverse-frequency", 60, seed=2, min_len=int(LONG), max_len=int(LONG))
    steps = store.path_steps(graph_workspace.db, report.batch_id)
    lengths = steps.groupby("idx")["step"].max() + 1
    assert report.min_len == 60 and report.below_min_len == int((lengths < 60).sum()) == report.n_paths
    # a walk stops only where it must: a dead end, or nowhere to go but back onto the path
    assert report.dead_end + report.revisit == report.below_min_len
    note = report.note
    assert f"{report.below_min_len} of {report.n_paths} paths are shorter than --min-len 60" in note
    if report.dead_end:
        assert f"{report.dead_end} reached a cluster with no out-edges" in note
    if report.revisit:
        assert f"{report.revisit} could only go on to a cluster already on the path" in note
    assert report.as_dict()["below_min_len"] == report.below_min_len and report.as_dict()["note"] == note


def test_single_skill_paths_are_never_called_short(graph_workspace):
    report = sample(graph_workspace, "single-skill", 20, seed=2, min_len=3, max_len=4)
    assert report.below_min_len == 0 and "shorter than" not in report.note


def test_cli_sample_prints_the_short_paths(graph_workspace):
    r = cli("sample", "--workspace", str(graph_workspace.root), "--n", "30", "--min-len", LONG, "--max-len", LONG)
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stderr.split())
    assert f"30 of 30 paths are shorter than --min-len {LONG}" in said
    assert "no out-edges" in said or "already on the path" in said


def test_the_note_joins_both_things_a_batch_can_fall_short_of():
    r = SampleReport("b", "random-walk", 3, 4, 3, redrawn=1, short=2, min_len=2, below_min_len=2, dead_end=1,
                     dead_end_clusters=1, revisit=1)
    assert r.note == ("the graph gave only 3 distinct paths of the 5 asked (8 redraw rounds); the batch has 3; "
                      "2 of 3 paths are shorter than --min-len 2 (mean 1.33 steps) after 16 tries each from new "
                      "starts: 1 reached a cluster with no out-edges (no skill starts from its scenario and no "
                      "bridge leaves it; 1 distinct cluster(s)), 1 could only go on to a cluster already on the "
                      "path; `workbench graph stats` says how connected the graph is and what to do")


def _pairs(steps) -> set[tuple[str, str]]:
    return set(zip(steps["src_anchor"], steps["skill_id"]))


def test_coverage_aware_can_steer_clear_of_the_pairs_stored_paths_cover(graph_workspace):
    db = graph_workspace.db
    stored = _pairs(store.path_steps(db))          # the fixture's 200 + 200 paths
    counts_before = store.visit_counts(db)
    batch = sample(graph_workspace, "coverage-aware", 40, seed=3)
    aware = sample(graph_workspace, "coverage-aware", 40, seed=3, uncovered_in="workspace")
    in_batch = store.path_steps(db, batch.batch_id)
    in_ws = store.path_steps(db, aware.batch_id)
    assert set(in_ws["sampler"]) == {"coverage-aware"} and aware.n_paths == 40
    # pairs no stored path had (measured 25 steering by the batch alone, 65 by the workspace)
    assert len(_pairs(in_ws) - stored) > 2 * len(_pairs(in_batch) - stored)
    assert store.visit_counts(db) == counts_before   # Algorithm 1's counts are not its business


def test_cli_sample_takes_the_coverage_aware_sampler_and_refuses_a_bad_uncovered_in(graph_workspace):
    r = cli("sample", "--workspace", str(graph_workspace.root), "--sampler", "coverage-aware", "--n", "20",
            "--uncovered-in", "workspace")
    assert r.returncode == 0, r.stderr
    assert "20 coverage-aware paths" in " ".join(r.stdout.split())
    r = cli("sample", "--workspace", str(graph_workspace.root), "--sampler", "coverage-aware", "--uncovered-in", "all")
    assert r.returncode == 2 and "--uncovered-in" in r.stderr
    with pytest.raises(ValueError, match=re.escape("unknown --uncovered-in 'all' (choose from batch, workspace)")):
        sample(graph_workspace, "coverage-aware", 5, 0, uncovered_in="all")
    # taken and ignored by another sampler would read as if it had steered that batch
    r = cli("sample", "--workspace", str(graph_workspace.root), "--sampler", "random-walk", "--uncovered-in", "workspace")
    assert r.returncode == 1
    assert "--uncovered-in workspace is for the coverage-aware sampler; random-walk does not" in " ".join(r.stderr.split())
