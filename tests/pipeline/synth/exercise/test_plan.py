"""Which documented script calls a task can make, and the reason when none can (no Docker)."""
from __future__ import annotations

from pipeline.synth.exercise.plan import ExercisePlan, exercise_plan

from .skills import FUNNEL, package_of, tree_with

SKILL = """---
name: {name}
description: {name} for local files.
---
# {name}

```bash
{line}
```
"""


def _plan(tmp_path, name: str, line: str, files: dict[str, str]):
    tree_with(tmp_path, {"SKILL.md": SKILL.format(name=name, line=line), **files})
    pkg = package_of(tmp_path, name)
    return exercise_plan(f"id-{name}", name, "", SKILL.format(name=name, line=line), (), pkg)


def test_the_funnel_skill_has_a_plan_on_its_own_sample():
    body = (FUNNEL / "SKILL.md").read_text()
    plan = exercise_plan("id", "funnel-report", "", body, (), package_of(FUNNEL, "funnel-report"))
    assert isinstance(plan, ExercisePlan), plan
    assert plan.script == "scripts/funnel_report.py" and plan.language == "python"
    assert plan.samples == ("assets/sample_funnel.json",)
    assert plan.invocation.settings == ["--format", "json"] and plan.invocation.prints
    assert "conversion funnel" in plan.purpose


def test_a_script_needing_a_third_party_module_is_not_served(tmp_path):
    got = _plan(tmp_path, "plotter", "python3 scripts/plot.py data.csv",
                {"scripts/plot.py": "import pandas\nprint(1)\n", "data.csv": "a,b\n1,2\n"})
    assert got == "scripts/plot.py: imports pandas: not in the base image's Python"


def test_a_script_talking_to_the_network_is_not_served(tmp_path):
    got = _plan(tmp_path, "fetcher", "python3 scripts/fetch.py urls.txt",
                {"scripts/fetch.py": "import urllib.request\n", "urls.txt": "x\n"})
    assert "talks to the network (urllib)" in got


def test_a_placeholder_that_is_no_file_is_not_served(tmp_path):
    got = _plan(tmp_path, "ns-check", "python3 scripts/check.py <namespace>",
                {"scripts/check.py": "import sys\nprint(sys.argv)\n"})
    assert "placeholder" in got and "<namespace>" in got


def test_an_input_type_the_package_has_no_sample_of_is_not_made_up(tmp_path):
    got = _plan(tmp_path, "csv-stats", "python3 scripts/stats.py table.csv",
                {"scripts/stats.py": "import csv, sys\nprint(sys.argv)\n"})
    assert got == "scripts/stats.py: the package has no .csv file to build the input table.csv from"


def test_unseeded_randomness_is_not_served(tmp_path):
    got = _plan(tmp_path, "shuffle", "python3 scripts/shuffle.py names.txt",
                {"scripts/shuffle.py": "import random, sys\nprint(random.random())\n", "names.txt": "a\nb\n"})
    assert "random values without a seed" in got


def test_a_positional_output_is_an_output_not_an_input(tmp_path):
    src = ("import argparse\np = argparse.ArgumentParser()\np.add_argument('export_csv')\n"
           "p.add_argument('output_json')\na = p.parse_args()\n")
    got = _plan(tmp_path, "indexer", "python3 scripts/index.py <export.csv> /tmp/index.json",
                {"scripts/index.py": src, "examples/export.csv": "id,name\n1,a\n"})
    assert isinstance(got, ExercisePlan), got
    assert [s.kind for s in got.invocation.slots] == ["input", "output"] and not got.invocation.prints


def test_a_skill_without_scripts_says_so():
    body = "---\nname: jq-tricks\ndescription: jq filters\n---\n```bash\njq '.a' x.json\njq -r '.b' y.json\n```\n"
    got = exercise_plan("id", "jq-tricks", "jq filters", body, ("jq",), None)
    # tried as a command exercise (test_command_plan): no sample with the keys its filters read
    assert got.startswith("documents commands of jq; none runs on a sample file: `jq` command: no sample for x.json")


def test_a_skill_whose_examples_run_tools_the_image_lacks_names_them():
    body = ("---\nname: deploy-helper\ndescription: ship releases\n---\n```bash\nkubectl apply -f app.yaml\n"
            "helm upgrade web ./chart\n```\n")
    got = exercise_plan("id", "deploy-helper", "ship releases", body, (), None)
    assert got == ("its SKILL.md runs no bundled script and its examples run kubectl, helm, not in the base image")


def test_a_skill_with_no_command_at_all_says_so():
    got = exercise_plan("id", "advice", "how to think", "---\nname: advice\n---\nThink first.\n", (), None)
    assert got.startswith("its SKILL.md runs no bundled script and shows no command at all")
