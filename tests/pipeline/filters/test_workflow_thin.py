"""`thin but concrete` (LABELLING.md): a skill without a step list that still says which
installable tool does what to local artifacts passes workflow.steps and workflow.not_terminal;
a thin text whose core is a remote API, a cloud or a language model does not."""
from __future__ import annotations

from pipeline.filters import workflow
from tests.pipeline.filters.rule_helpers import skill_from_text
from workbench.models import Outcome


def _thin(description: str, install: str = "- pip install sqlfmt-cli") -> str:
    return (f'---\nname: "Format SQL files with sqlfmt"\ndescription: "{description}"\n---\n\n'
            f"# Format SQL files\n\n{description}\n\n## Installation\n\n{install}\n\n"
            "## Documentation\n\n- https://example.org/sqlfmt\n")


CONCRETE = "Use sqlfmt to reformat dbt SQL files in a repository so every model follows one style."


def test_a_named_tool_that_reformats_local_files_passes_both_rules():
    skill = skill_from_text(_thin(CONCRETE))
    steps, terminal = workflow.structured_steps(skill), workflow.not_terminal(skill)
    assert steps.outcome == Outcome.PASS and "thin but concrete" in steps.evidence, steps.evidence
    assert "pip install sqlfmt-cli" in steps.evidence     # the install line is the evidence of a tool
    assert terminal.outcome == Outcome.PASS and "thin but concrete" in terminal.evidence, terminal.evidence


def test_declared_binaries_stand_for_the_install_line():
    text = _thin(CONCRETE, install="See upstream.").replace(
        "---\n\n#", "metadata: {\"openclaw\": {\"requires\": {\"bins\": [\"sqlfmt\"]}}}\n---\n\n#", 1)
    res = workflow.structured_steps(skill_from_text(text))
    assert res.outcome == Outcome.PASS and "binaries sqlfmt" in res.evidence, res.evidence


def test_without_an_installable_tool_a_thin_text_has_no_workflow():
    res = workflow.structured_steps(skill_from_text(_thin(CONCRETE, install="See the project page.")))
    assert res.outcome == Outcome.FAIL


def test_a_blurb_without_an_action_on_an_artifact_has_no_workflow():
    blurb = "A delightful companion that makes your whole engineering team happier and faster every day."
    assert workflow.structured_steps(skill_from_text(_thin(blurb))).outcome == Outcome.FAIL
    short = "Formats SQL files."                                     # under MIN_DESCRIPTION_WORDS
    assert workflow.structured_steps(skill_from_text(_thin(short))).outcome == Outcome.FAIL


def test_a_thin_text_whose_core_is_remote_or_a_model_is_not_concrete():
    for desc in ("Composes deployment pipelines from reusable orbs through the Acme CI v2 API for monorepos.",
                 "Uses LLM-assisted generation to build fuzzing harnesses for C projects before release.",
                 "Combines natural-language actions with browser code to extract tables from any site.",
                 "Transforms Parquet datasets with schema inference and writes them to AWS Glue catalogs."):
        res = workflow.structured_steps(skill_from_text(_thin(desc)))
        assert res.outcome == Outcome.FAIL, (desc, res.evidence)


def test_an_optional_model_step_does_not_undo_an_offline_core():
    desc = ("Converts PDF and DOCX files to Markdown and JSON locally, with optional LLM-boosted "
            "extraction for hard tables.")
    res = workflow.structured_steps(skill_from_text(_thin(desc, install="- pip install pdf2md-cli")))
    assert res.outcome == Outcome.PASS and "thin but concrete" in res.evidence, res.evidence


def test_a_thin_text_that_calls_itself_guidance_names_no_work():
    desc = "Guidance for rewriting the history of a local git repository before sharing it with others."
    res = workflow.structured_steps(skill_from_text(_thin(desc, install="- apt-get install git")))
    assert res.outcome == Outcome.FAIL, res.evidence


def test_no_command_no_code_and_a_text_that_calls_itself_advice_is_not_terminal_work():
    text = ('---\nname: review-etiquette\ndescription: "Guidance on how to respond to code review feedback '
            'with care."\n---\n\n# Receiving review\n\nRead every comment before answering. Thank the reviewer, '
            'ask when a remark is unclear, and push back with reasons when you disagree.\n')
    res = workflow.not_terminal(skill_from_text(text))
    assert res.outcome == Outcome.FAIL and "calls itself 'Guidance'" in res.evidence, res.evidence
    # the same prose without calling itself advice is left to a person
    res = workflow.not_terminal(skill_from_text(text.replace("Guidance on how to respond", "Respond")))
    assert res.outcome == Outcome.WARN, res.evidence
