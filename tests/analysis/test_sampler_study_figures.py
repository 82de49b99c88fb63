"""The sampler study's figures: one trace per sampler, the reference lines drawn."""
from __future__ import annotations

import pytest

from analysis import sampler_study as ss
from analysis import sampler_study_figures as sf
from tests.pipeline.graph.test_sampling import ring_graph


@pytest.fixture(scope="module")
def study():
    s = ss.draw_study(ring_graph(), 20, seeds=(0,))
    return ss.study_table(s), ss.growth_frame(s)


def _hlines(fig) -> list[float]:
    return sorted(shape.y0 for shape in fig.layout.shapes)


def test_growth_curves_have_a_line_per_sampler(study):
    _, growth = study
    fig = sf.growth_curves(growth)
    assert sorted(t.name for t in fig.data) == sorted(growth["sampler"].unique())
    assert fig.layout.xaxis.title.text == "paths sampled"


def test_ratio_growth_leaves_out_the_baseline_and_draws_the_target(study):
    _, growth = study
    fig = sf.ratio_growth(growth)
    assert "random-walk" not in {t.name for t in fig.data}
    assert _hlines(fig) == [1.0, ss.TARGET_VS_RANDOM_WALK]


def test_ratio_bars_stand_next_to_skillsynths_reported_gain(study):
    table, _ = study
    fig = sf.ratio_bars(table)
    assert len(fig.data) == 4 and all(len(t.x) == len(table) for t in fig.data)
    assert {t.name for t in fig.data} >= {"vs random walk (equal paths)", "vs random walk (equal steps)"}
    assert _hlines(fig) == [ss.TARGET_VS_RANDOM_WALK, ss.SKILLSYNTH_VS_SINGLE_SKILL]
    assert any("+31%" in a.text for a in fig.layout.annotations)


def test_entropy_bars_one_per_sampler(study):
    table, _ = study
    fig = sf.entropy_bars(table)
    assert sum(len(t.x) for t in fig.data) == len(table)
    assert list(fig.layout.yaxis.range) == [0, 1]
