"""A skill-exercise task in a real container: the skill's own script is the oracle and passes, the
untouched environment fails, and a solution that bypasses the skill (a plausible report written by
hand, or the script run on the package's own sample instead of the task's input) fails."""
from __future__ import annotations

import json

import pytest

from pipeline.synth.compose import PathStep, synthesize_task
from pipeline.verify.run import image_for, verify_bundle
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import TaskBundle
from workbench.sandbox.engine import Engine

from .skills import funnel_step, log_summary_step, verified_with_bypass

pytestmark = [pytest.mark.docker]

OTHER = PathStep("id-csv", "tabulate-csv", "data-processing", "", "a1", "a2")


def _with_solution(bundle: TaskBundle, extra: str, script: str = "funnel_report.py") -> TaskBundle:
    """The reference solution with its exercise step replaced by `extra` (the recipe step kept)."""
    lines = bundle.text("solution/solve.sh").splitlines()
    out = [line if script not in line else extra for line in lines]
    files = dict(bundle.files)
    files["solution/solve.sh"] = ("\n".join(out) + "\n").encode()
    return TaskBundle(files, set(bundle.executables))


def test_the_skills_script_is_the_oracle_and_a_bypass_fails():
    task = synthesize_task([funnel_step(), OTHER], 3, base_image_name(), path_id="p1")
    given = json.loads(task.bundle.files["environment/app/input/funnel-report/funnel.json"])
    plausible = {"stages": len(given["stages"]), "overall_conversion": 0.035, "steps": [],
                 "largest_drop": {"at": "visit -> signup", "lost": 8900}}
    by_hand = _with_solution(task.bundle, "cat > /app/out/funnel-report/funnel_report.json <<'EOF'\n"
                             + json.dumps(plausible, indent=2) + "\nEOF")
    on_sample = _with_solution(task.bundle, "python3 /skills/funnel-report/scripts/funnel_report.py "
                               "/skills/funnel-report/assets/sample_funnel.json --format json "
                               "> /app/out/funnel-report/funnel_report.json")
    engine = Engine()
    try:
        checks = {c.name: c for c in verify_bundle(task.bundle, engine=engine)}
        assert checks["oracle"].passed, checks["oracle"].log[-2000:]
        assert checks["rubric"].passed, checks["rubric"].log     # the shipped script is no leaked test file
        assert checks["noop"].passed, checks["noop"].reason     # the no-op check holds: untouched, tests fail
        untouched = {t["name"]: t["outcome"] for t in checks["noop"].details["tests"]}
        assert untouched["test_s1_skill_result"] != "passed"
        for bad in (by_hand, on_sample):
            got = {c.name: c for c in verify_bundle(bad, engine=engine)}
            assert not got["oracle"].passed, "a solution that bypasses the skill's script passed"
            failed = [t["name"] for t in got["oracle"].details["tests"] if t["outcome"] != "passed"]
            assert failed == ["test_s1_skill_result"], failed
    finally:
        for b in (task.bundle, by_hand, on_sample):
            engine.remove_image(image_for(b))


def test_a_shell_skill_writing_its_own_output_file_is_the_oracle_and_its_example_output_fails():
    """The documented call writes with `-o`; a solution that runs the skill on the package's own example
    log (not the task's, which keeps a random most of its lines) leaves a plausible TSV that is wrong."""
    task = synthesize_task([log_summary_step(), OTHER], 4, base_image_name(), path_id="p3")
    solve = task.bundle.text("solution/solve.sh")
    assert "bash /skills/log-level-summary/scripts/summarize.sh /app/input/log-level-summary/app.log -o " \
           "/app/out/log-level-summary/summary.tsv" in solve
    given = task.bundle.files["environment/app/input/log-level-summary/app.log"]
    assert given != task.bundle.files["environment/skills/log-level-summary/examples/app.log"]
    on_example = _with_solution(task.bundle, "bash /skills/log-level-summary/scripts/summarize.sh "
                                "/skills/log-level-summary/examples/app.log -o /app/out/log-level-summary/summary.tsv",
                                script="summarize.sh")
    checks, failed = verified_with_bypass(task.bundle, on_example)
    assert checks["oracle"].passed and checks["noop"].passed and checks["rubric"].passed, \
        {n: c.reason for n, c in checks.items()}
    assert failed == ["test_s1_skill_result"], failed
