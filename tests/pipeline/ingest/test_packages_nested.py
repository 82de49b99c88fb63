"""Nested packages: a SKILL.md below another package is its own package, or reported with the
reason it is not (a template, an example, test material, installed dependencies)."""
from __future__ import annotations

import json

from tests.helpers import write_skill
from pipeline.ingest import packages
from pipeline.ingest.run import ingest
from workbench.store import skills as skill_store


def _files(workspace, key: str) -> list[str]:
    rows = [s for _, s, _ in skill_store.current_skills(workspace.db) if s.skill_key == key]
    assert rows, f"{key} not stored"
    return sorted(rows[0].package_files)


def _plugin_corpus(tmp_path):
    """A plugin repository shaped like the real ones: a top-level skill that bundles more
    skills under skills/ and .claude/skills/, with scripts in each."""
    corpus = tmp_path / "corpus"
    top = write_skill(corpus, "release-kit", description="Cut a release of a Python project.")
    (top / "scripts").mkdir()
    (top / "scripts" / "bump.sh").write_text("#!/bin/sh\nsed -i 's/0.1/0.2/' pyproject.toml\n")
    child = write_skill(top, "skills/changelog", description="Write CHANGELOG.md from git log.")
    (child / "scripts").mkdir()
    (child / "scripts" / "log.sh").write_text("#!/bin/sh\ngit log --oneline v0.1..HEAD\n")
    write_skill(top, ".claude/skills/tag-release", description="Tag the release commit with git tag.")
    grandchild = write_skill(child, "skills/keep-a-changelog", description="Format entries in Keep a Changelog style.")
    (grandchild / "rules.md").write_text("Added, Changed, Fixed.\n")
    return corpus, top


def test_nested_skill_folders_are_packages_of_their_own(workspace, tmp_path):
    corpus, _ = _plugin_corpus(tmp_path)
    report = ingest(workspace, [corpus])

    assert sorted(report.new) == ["release-kit", "release-kit/.claude/skills/tag-release",
                                  "release-kit/skills/changelog",
                                  "release-kit/skills/changelog/skills/keep-a-changelog"]
    assert report.problems == []
    # Each package holds its own files only: the outer one stops at a nested package's folder.
    assert _files(workspace, "release-kit") == ["SKILL.md", "scripts/bump.sh"]
    assert _files(workspace, "release-kit/skills/changelog") == ["SKILL.md", "scripts/log.sh"]
    assert _files(workspace, "release-kit/skills/changelog/skills/keep-a-changelog") == ["SKILL.md", "rules.md"]


def test_templates_examples_and_fixtures_are_reported_and_stay_the_outer_packages_files(workspace, tmp_path):
    corpus = tmp_path / "corpus"
    creator = write_skill(corpus, "skill-creator", description="Create new skills from a template.")
    write_skill(creator, "templates/basic", name="your-skill-name", description="Describe your skill here.")
    write_skill(creator, "examples/pdf-rotate", description="An example skill that rotates PDF pages.")
    write_skill(creator, "tests/fixtures/minimal", description="Minimal fixture.")
    write_skill(creator, "skill-template", description="Copy this folder to start a skill.")

    report = ingest(workspace, [corpus])

    assert report.new == ["skill-creator"]
    reasons = {p.file.removeprefix(f"{creator}/"): p.reason for p in report.problems}
    assert set(reasons) == {"templates/basic/SKILL.md", "examples/pdf-rotate/SKILL.md",
                            "tests/fixtures/minimal/SKILL.md", "skill-template/SKILL.md"}
    assert "in the templates/ folder of package skill-creator" in reasons["templates/basic/SKILL.md"]
    assert "in the examples/ folder" in reasons["examples/pdf-rotate/SKILL.md"]
    assert "in the tests/ folder" in reasons["tests/fixtures/minimal/SKILL.md"]
    assert "in the skill-template/ folder" in reasons["skill-template/SKILL.md"]
    assert all("not a package of its own" in r for r in reasons.values())
    assert _files(workspace, "skill-creator") == [
        "SKILL.md", "examples/pdf-rotate/SKILL.md", "skill-template/SKILL.md",
        "templates/basic/SKILL.md", "tests/fixtures/minimal/SKILL.md"]


def test_skill_md_among_installed_dependencies_is_reported(workspace, tmp_path):
    corpus = tmp_path / "corpus"
    tool = write_skill(corpus, "md-lint", description="Lint Markdown with markdownlint-cli.")
    write_skill(tool, "node_modules/some-dep", description="A dependency's own skill.")
    write_skill(corpus, "node_modules/other-dep", description="Installed at the corpus root.")

    report = ingest(workspace, [corpus])

    assert report.new == ["md-lint"]
    by_file = {p.file: p.reason for p in report.problems}
    assert set(by_file) == {f"{tool}/node_modules/some-dep/SKILL.md",
                            f"{corpus}/node_modules/other-dep/SKILL.md"}
    assert all("node_modules/ (installed dependencies)" in r for r in by_file.values())
    assert _files(workspace, "md-lint") == ["SKILL.md"]


def test_nested_package_with_broken_front_matter_is_reported_as_any_other(workspace, tmp_path):
    corpus = tmp_path / "corpus"
    top = write_skill(corpus, "suite", description="A suite of skills.")
    (top / "skills" / "broken").mkdir(parents=True)
    (top / "skills" / "broken" / "SKILL.md").write_text("# No front matter\n\n1. step\n")
    (top / "skills" / "nodesc").mkdir(parents=True)
    (top / "skills" / "nodesc" / "SKILL.md").write_text("---\nname: nodesc\n---\n1. a\n")

    report = ingest(workspace, [corpus])

    assert report.new == ["suite"]
    reasons = {p.file.removeprefix(f"{top}/"): p.reason for p in report.problems}
    assert "no YAML front matter" in reasons["skills/broken/SKILL.md"]
    assert reasons["skills/nodesc/SKILL.md"] == "front matter lacks required field 'description'"
    # Broken or not, a nested package is not the outer package's files.
    assert _files(workspace, "suite") == ["SKILL.md"]


def test_nested_reason_looks_only_below_the_outer_package(tmp_path):
    # A corpus that itself lives under a folder called "examples" is not a template.
    outer = tmp_path / "examples" / "corpus" / "kit"
    assert packages.nested_reason(outer / "skills" / "one", outer) is None
    assert packages.nested_reason(outer / "plugins" / "p" / "skills" / "two", outer) is None
    assert "sample-skill/" in packages.nested_reason(outer / "sample-skill", outer)
    assert "fixtures/" in packages.nested_reason(outer / "fixtures" / "x", outer)


def test_identical_copy_under_another_key_is_its_own_skill_and_a_duplicate(workspace, tmp_path):
    corpus = tmp_path / "corpus"
    steps = ["Dump the schema with `sqlite3 app.db .schema > schema.sql`.",
             "Compare it with the committed one using `diff -u schema.sql db/schema.sql`.",
             "Fail the check when the diff is not empty."]
    write_skill(corpus, "vendor-a/schema-drift", name="schema-drift", description="Detect schema drift.", steps=steps)
    write_skill(corpus, "vendor-b/schema-drift", name="schema-drift", description="Detect schema drift.", steps=steps)

    report = ingest(workspace, [corpus])

    assert sorted(report.new) == ["vendor-a/schema-drift", "vendor-b/schema-drift"]
    assert report.unchanged == 0
    table = skill_store.skills_table(workspace.db)
    assert len(set(table["id"])) == 2
    again = ingest(workspace, [corpus])
    assert again.unchanged == 2 and not again.new and not again.new_versions


def test_other_jsonl_data_in_a_walk_is_reported_once_and_exports_still_ingest(workspace, tmp_path):
    corpus = tmp_path / "corpus"
    write_skill(corpus, "count-lines", description="Count lines.")
    labels = [{"path": f"skills/s{i}", "label": "accept", "reason": "executable"} for i in range(30)]
    (corpus / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    export = {"name": "jq-filter", "description": "Filter JSON with jq.",
              "content": "## Steps\n1. Run `jq '.items[]' data.json`.\n2. Save the result.\n"}
    (corpus / "registry.jsonl").write_text(json.dumps(export) + "\n")

    report = ingest(workspace, [corpus])

    assert sorted(report.new) == ["count-lines", "registry.jsonl#jq-filter"]
    assert len(report.problems) == 1
    assert report.problems[0].file == str(corpus / "labels.jsonl")
    assert report.problems[0].reason.startswith("not a skill export: its first record has the fields "
                                                "label, path, reason")


def test_every_skill_md_of_the_dev_corpus_is_stored_or_reported(dev_corpus, dev_workspace_template):
    """The real corpus: no SKILL.md silently folded into another package or dropped."""
    from workbench.workspace import Workspace
    ws = Workspace.open(dev_workspace_template)
    stored = {s.source_path for _, s, _ in skill_store.current_skills(ws.db)}
    reported = set(skill_store.ingest_problems(ws.db, limit=100_000)["file"])
    folders = sorted(p.parent for p in dev_corpus.rglob("*") if p.name.lower() == "skill.md")
    lost = [f for f in folders if str(f) not in stored and str(f / "SKILL.md") not in reported]
    assert len(folders) > 1000 and not lost, lost[:5]
    # Measured: 1,176 stored (1,115 before), 25 problems (148 before, 80 of them one per labels.jsonl line).
    assert len(stored & {str(f) for f in folders}) >= 1150


def test_a_package_given_itself_keys_its_nested_packages_under_its_name(workspace, tmp_path):
    _, top = _plugin_corpus(tmp_path)
    report = ingest(workspace, [top])
    assert sorted(report.new) == ["release-kit", "release-kit/.claude/skills/tag-release",
                                  "release-kit/skills/changelog",
                                  "release-kit/skills/changelog/skills/keep-a-changelog"]
    assert _files(workspace, "release-kit") == ["SKILL.md", "scripts/bump.sh"]
