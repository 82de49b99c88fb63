"""How alike a batch's tasks read: 5-gram Jaccard of instructions, identical solve.sh, family counts."""
from __future__ import annotations

import pytest

from analysis.task_diversity import batch_diversity, identical_share, jaccard, mean_pairwise_jaccard, shingles


def test_shingles_are_five_word_runs_case_and_punctuation_blind():
    assert shingles("Write `/app/out/a.csv` now, please!") == frozenset(
        {("write", "app", "out", "a", "csv"), ("app", "out", "a", "csv", "now"), ("out", "a", "csv", "now", "please")})
    assert shingles("two words") == frozenset({("two", "words")})
    assert shingles("") == frozenset()


def test_jaccard_of_identical_disjoint_and_overlapping_texts():
    a = shingles("one two three four five six")
    b = shingles("two three four five six seven")
    assert jaccard(a, a) == 1.0
    assert jaccard(a, shingles("alpha beta gamma delta epsilon")) == 0.0
    assert jaccard(a, b) == pytest.approx(1 / 3)     # {2..6} shared of {1..5, 2..6, 3..7}
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_mean_pairwise_jaccard_averages_every_pair():
    texts = ["one two three four five six", "two three four five six seven", "alpha beta gamma delta epsilon"]
    assert mean_pairwise_jaccard(texts) == pytest.approx((1 / 3 + 0 + 0) / 3)
    assert mean_pairwise_jaccard(texts[:1]) == 0.0
    assert mean_pairwise_jaccard(["same words in both of them"] * 4) == 1.0


def test_identical_share_counts_every_member_of_a_repeated_solution():
    assert identical_share(["a", "b", "a", "c", b"a"]) == pytest.approx(3 / 5)   # bytes and text alike
    assert identical_share(["a", "b"]) == 0.0
    assert identical_share([]) == 0.0


def test_batch_figures_and_a_mismatched_batch_is_refused():
    d = batch_diversity(["x y z", "p q r"], ["s1", "s1"], [["json-convert", "json-convert"], ["json-convert", "git"]])
    assert d.tasks == 2 and d.identical_solve_share == 1.0
    assert d.family_counts == {"json-convert": 2, "git": 1}
    assert d.top_family_share == 1.0
    with pytest.raises(ValueError, match="one instruction, solve.sh and recipe list per task: got 2, 1 and 2"):
        batch_diversity(["a", "b"], ["s"], [[], []])
