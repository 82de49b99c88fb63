"""instruction.md as layout writes it: fixed paragraphs said several ways and only where they
apply, the skills list as the composer gives it, no intro citing a file the step itself makes,
no file count of an earlier result, and requirement sentences reworded alike in the
instruction and the test docstrings."""
from __future__ import annotations

import re

import pytest

from pipeline.synth import recipes as R
from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.synth.layout import names_unmade, phrase, render_instruction
from pipeline.synth.recipes.base import Check
from pipeline.verify.rubric import check_rubric

SORTED = Check("Order the rows of `/app/out/a.csv` by `id` ascending.", [("order", "pass")])
ROUNDED = Check("Write `/app/out/m.txt` with the mean rounded to two decimals.", [("mean", "pass")])
PLAIN = Check("Create the folder `/app/out/x`.", [("x", "pass")])


def _steps(*names):
    return [PathStep(f"s{k}", n, R.REGISTRY[n].category, "", f"a{k}", f"a{k + 1}") for k, n in enumerate(names)]


def test_the_fixed_paragraphs_are_worded_per_task_not_one_text_for_all():
    texts = [render_instruction("T", [], [("Step", "", [PLAIN]), ("Two", "", [SORTED])], key=str(k)) for k in range(30)]
    openings = {t.split("\n")[2] for t in texts}
    headings = {line for t in texts for line in t.splitlines() if line.startswith("## ") and "Step" not in line}
    assert len(openings) >= 5 and len(headings) >= 3, (openings, headings)
    assert render_instruction("T", [], [("Step", "", [PLAIN])], key="7") == \
        render_instruction("T", [], [("Step", "", [PLAIN])], key="7")      # same task, same words


def test_notes_appear_only_where_the_task_needs_them():
    plain = render_instruction("T", [], [("Step", "", [PLAIN])], key="k")
    assert "0.01" not in plain and "C locale" not in plain and "byte order" not in plain
    assert "earlier" not in plain.split("## Step 1")[1]           # one step: nothing earlier to keep
    both = render_instruction("T", [], [("Step", "", [PLAIN]), ("Two", "", [SORTED, ROUNDED])], key="k")
    assert "0.01" in both and re.search(r"C locale|byte order|character-code", both)


def test_the_skills_list_is_rendered_exactly_as_given():
    given = ["**jq-filter** (data-processing): Filter JSON.", "**git-bisect** (git)"]
    text = render_instruction("T", given, [("Step", "", [PLAIN])], key="k")
    listed = [line[2:] for line in text.splitlines() if line.startswith("- **")]
    assert listed == given
    assert "**" not in render_instruction("T", [], [("Step", "", [PLAIN])], key="k")


def test_an_intro_citing_a_file_not_made_yet_is_left_out():
    made_here = Check("Write `/app/work/t_lengths.csv` with one row per line.", [("w", "pass")])
    text = render_instruction("T", [], [("One", "Read `/app/input/a.txt` first.", [PLAIN]),
                                        ("Two", "Reshape `/app/work/t_lengths.csv` now.", [made_here]),
                                        ("Three", "Look at `/app/out/x` again.", [SORTED])],
                              key="k", existing={"/app/input/a.txt"})
    assert "Read `/app/input/a.txt` first." in text           # an input: there from the start
    assert "Reshape" not in text                               # made by this very step
    assert "Look at `/app/out/x` again." in text               # named by an earlier step
    assert names_unmade("see the folder `/app/out/`", {"/app/out/a.csv"}) is False   # holds a known file
    assert names_unmade("see `/app/repo/data/a.csv`", {"/app/repo"}) is False   # placed in a named repository
    assert names_unmade("see `/app/work/t.csv`", {"/app/work/u.csv"}) is True   # a sibling is no evidence


def test_a_step_after_an_adapter_does_not_open_with_the_adapters_file():
    # regex-extract leaves lines; json-convert reads a table, so the line-lengths adapter bridges.
    task = synthesize_task(_steps("regex-extract", "json-convert"), 0, "base", force=["regex-extract", "json-convert"])
    step2 = task.bundle.text("instruction.md").split("## Step 2")[1]
    first = [line for line in step2.splitlines()[1:] if line.strip()][0]
    assert re.match(r"\d+\. ", first), f"step 2 opens with {first!r}"
    assert check_rubric(task.bundle).passed


def test_no_instruction_cites_the_file_count_of_an_earlier_result():
    task = synthesize_task(_steps("archive-extract-verify", "archive-pack"), 1, "base",
                           force=["archive-extract-verify", "archive-pack"])
    assert not re.search(r"\(\d+ files\)", task.bundle.text("instruction.md"))


def test_sentence_shapes_have_several_wordings_and_keep_their_facts():
    sentences = [f"Use exactly the columns `a`, `b{k}` in this order in `/app/out/t{k}.csv`." for k in range(12)]
    worded = [phrase(s) for s in sentences]
    assert len({re.sub(r"`[^`]*`", "", w) for w in worded}) >= 3
    for k, w in enumerate(worded):
        assert f"`/app/out/t{k}.csv`" in w and f"`b{k}`" in w and w.endswith(".")
        Check(w, [])                                           # still one docstring-safe sentence
    assert phrase(sentences[0]) == phrase(sentences[0])
    assert phrase("Extract the archive.") == "Extract the archive."


def test_instruction_and_test_docstrings_carry_the_same_wording():
    task = synthesize_task(_steps("group-aggregate", "json-convert"), 3, "base", force=["group-aggregate", "json-convert"])
    text = task.bundle.text("instruction.md").replace("`", "")
    docs = re.findall(r'def test_\w+\(\):\n    """(.+?)"""', task.bundle.text("tests/test_outputs.py"))
    assert docs and all(d in text for d in docs)
    assert check_rubric(task.bundle).passed


# --- tests/test.sh: CTRF beside the JUnit XML ------------------------------------------------------

CTRF_TESTS_PY = '''import pytest


def test_passes():
    assert True


def test_fails():
    assert 1 == 2, "one is not two"


def test_skipped():
    pytest.skip("not here")
'''


def _run_runner(engine, test_sh: str) -> dict[str, bytes]:
    """tests/test.sh through the trials' sealed test phase (emptied /logs/verifier, the read-only
    toolchain, a clean environment) in the base image; the files it left in /logs/verifier."""
    from pipeline.trials.sandbox import limits_for, sandbox
    from pipeline.trials.test_phase import run_tests
    from tests.helpers import sum_bundle
    from workbench.sandbox.task_toml import parse
    bundle = sum_bundle(extra_files={"tests/test.sh": test_sh, "tests/test_outputs.py": CTRF_TESTS_PY})
    cfg = parse(bundle.text("task.toml"))
    built = engine.build(bundle.under("environment"), bundle.environment_hash(), 300)
    assert built.ok, built.log[-2000:]
    with sandbox(engine, built.image, limits_for(cfg), "test-ctrf") as box:
        res = run_tests(box, bundle, cfg, 1.0)
    assert res.details["exit_code"] == 0, res.log[-2000:]
    return {k.rsplit("/", 1)[-1]: v for k, v in res.files.items()}


@pytest.mark.docker
def test_the_runner_writes_ctrf_with_the_same_outcomes_as_the_junit_xml(engine):
    import json

    from pipeline.synth.test_sh import TEST_SH
    from pipeline.synth.llm.models import TestsDraft
    from pipeline.synth.llm.render import test_sh_for
    from pipeline.verify.junit import parse_ctrf, parse_junit

    files = _run_runner(engine, TEST_SH)
    assert files["reward.txt"].strip() == b"0"
    ctrf = json.loads(files["ctrf.json"])["results"]
    assert ctrf["tool"] == {"name": "pytest"}
    assert {k: ctrf["summary"][k] for k in ("tests", "passed", "failed", "skipped", "pending", "other")} == \
        {"tests": 3, "passed": 1, "failed": 1, "skipped": 1, "pending": 0, "other": 0}
    assert ctrf["summary"]["start"] <= ctrf["summary"]["stop"]
    by_name = {t["name"]: t for t in ctrf["tests"]}
    assert {n: t["status"] for n, t in by_name.items()} == {"test_passes": "passed", "test_fails": "failed",
                                                          "test_skipped": "skipped"}
    assert "one is not two" in by_name["test_fails"]["message"]
    assert all(isinstance(t["duration"], int) and t["duration"] >= 0 for t in ctrf["tests"])
    assert parse_ctrf(files["ctrf.json"]) == parse_junit(files["junit.xml"])   # one story in both files

    # The weighted runner (LLM tasks) reads pytest's exit code after the CTRF step ran.
    weighted = test_sh_for(TestsDraft(test_py=CTRF_TESTS_PY, weights={"test_passes": 3, "test_fails": 1}))
    files = _run_runner(engine, weighted)
    assert "ctrf.json" in files and float(files["reward.txt"]) == pytest.approx(3 / 5)   # skipped earns nothing
