"""Issue 12: a 40-path batch of the demo graph reads as 40 different tasks — mean pairwise
5-gram Jaccard of the instructions at most 0.10, no two byte-identical solve.sh, no family in
more than a third of the tasks — and covers at least 12 of the 14 categories (by the families
its steps use)."""
from __future__ import annotations

from analysis.synth_fidelity import category_coverage
from analysis.task_diversity import batch_diversity
from pipeline.graph.sample_run import sample
from pipeline.synth.batch import _steps_by_path
from pipeline.synth.compose import synthesize_task
from pipeline.synth.recipes import REGISTRY
from pipeline.taxonomy import CATEGORIES
from workbench.store import graph as graph_store
from workbench.store import tasks as store


def demo_batch(ws, n: int = 40, seed: int = 0):
    drawn = sample(ws, "inverse-frequency", n, seed)
    work = _steps_by_path(store.path_steps_with_skills(ws.db, graph_store.batch_path_ids(ws.db, drawn.batch_id)))
    return [synthesize_task(steps, seed, "workbench/base:test", path_id=pid) for pid, steps in work.items()]


def test_a_40_path_demo_batch_is_diverse_and_covers_the_categories(graph_workspace):
    tasks = demo_batch(graph_workspace)
    assert len(tasks) == 40
    d = batch_diversity([t.bundle.text("instruction.md") for t in tasks],
                        [t.bundle.files["solution/solve.sh"] for t in tasks], [t.recipes for t in tasks])
    assert d.mean_jaccard <= 0.10, d
    assert d.identical_solve_share == 0.0, d
    assert d.top_family_share <= 1 / 3, d.family_counts
    cov = category_coverage([[REGISTRY[r].category for r in t.recipes] for t in tasks], list(CATEGORIES))
    assert len(cov.covered) >= 12, f"covered {cov.covered}, missing {cov.missing}"
