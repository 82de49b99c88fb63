"""Hostile and broken packages: each is reported with its file and reason, the rest ingests."""
from __future__ import annotations

import json
import os

from tests.helpers import cli, write_skill
from pipeline.ingest.run import ingest
from workbench.store import skills as skill_store


def _broken_corpus(tmp_path):
    corpus = tmp_path / "corpus"
    write_skill(corpus, "ok/one", description="Count lines.")
    write_skill(corpus, "ok/two", description="Sort a file.", steps=["Sort with `sort a.txt`.", "Save it."])
    bad_yaml = corpus / "bad/yaml"
    bad_yaml.mkdir(parents=True)
    (bad_yaml / "SKILL.md").write_text("---\nname: yaml\ndescription: \"unclosed\n---\n# x\n")
    no_fm = corpus / "bad/nofm"
    no_fm.mkdir(parents=True)
    (no_fm / "SKILL.md").write_text("# Just a heading\n\n1. one\n2. two\n")
    binary = corpus / "bad/binary"
    binary.mkdir(parents=True)
    (binary / "SKILL.md").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(200))
    latin = corpus / "bad/latin1"
    latin.mkdir(parents=True)
    (latin / "SKILL.md").write_bytes("---\nname: cafe\ndescription: Café naïve\n---\n".encode("latin-1"))
    huge = write_skill(corpus, "bad/huge", description="Ships a huge asset.")
    with open(huge / "assets.bin", "wb") as fh:  # sparse: 50 MB without writing 50 MB
        fh.truncate(50 * 1024 * 1024)
    loop = write_skill(corpus, "bad/loop", description="Has a symlink loop.")
    os.symlink("b", loop / "a")
    os.symlink("a", loop / "b")
    outside = write_skill(corpus, "bad/outside", description="Links outside.")
    os.symlink("/etc/passwd", outside / "passwd")
    os.symlink("/etc", corpus / "etc-link")
    return corpus


EXPECTED = {
    "bad/yaml": "not valid YAML",
    "bad/nofm": "no YAML front matter",
    "bad/binary": "binary file",
    "bad/latin1": "not UTF-8",
    "bad/huge": "over the 5 MiB per-file limit",
    "bad/loop": "symlink loop",
    "bad/outside": "outside the corpus",
    "etc-link": "outside the corpus",
}


def test_broken_packages_reported_rest_ingested(workspace, tmp_path):
    corpus = _broken_corpus(tmp_path)
    report = ingest(workspace, [corpus])
    assert sorted(report.new) == ["ok/one", "ok/two"]
    for rel, reason in EXPECTED.items():
        hits = [p for p in report.problems if f"/{rel}" in p.file]
        assert hits, f"{rel} not reported; got {[p.file for p in report.problems]}"
        assert reason in hits[0].reason, hits[0]
    assert len(report.problems) == len(EXPECTED)


def test_bad_input_loses_nothing_already_stored(workspace, tmp_path):
    good = tmp_path / "good"
    write_skill(good, "keep/me", description="Stay stored.")
    ingest(workspace, [good])
    ingest(workspace, [_broken_corpus(tmp_path)])
    keys = set(skill_store.skills_table(workspace.db)["skill_key"])
    assert {"keep/me", "ok/one", "ok/two"} <= keys


def test_missing_required_field_names_the_field(workspace, tmp_path):
    corpus = tmp_path / "c"
    (corpus / "nodesc").mkdir(parents=True)
    (corpus / "nodesc" / "SKILL.md").write_text("---\nname: nodesc\n---\n1. a\n2. b\n")
    report = ingest(workspace, [corpus])
    assert report.problems[0].reason == "front matter lacks required field 'description'"



def test_cli_exit_code_nonzero_only_when_nothing_ingested(tmp_path):
    corpus = _broken_corpus(tmp_path)
    ws = str(tmp_path / "ws")
    ok = cli("--workspace", ws, "ingest", str(corpus), "--json")
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["new"] == 2 and data["errors"] == len(EXPECTED)
    again = cli("--workspace", ws, "ingest", str(corpus))
    assert again.returncode == 0  # unchanged skills still count as ingested
    assert "unchanged" in again.stdout
    only_bad = tmp_path / "only-bad"
    (only_bad / "x").mkdir(parents=True)
    (only_bad / "x" / "SKILL.md").write_text("no front matter here")
    bad = cli("--workspace", ws, "ingest", str(only_bad))
    assert bad.returncode == 1
    assert "no YAML front matter" in bad.stdout.replace("\n", " ") or "front matter" in bad.stdout
    missing = cli("--workspace", ws, "ingest", str(tmp_path / "does-not-exist"))
    assert missing.returncode == 1 and "does not exist" in missing.stdout


def test_jsonl_export_bad_lines_reported_good_lines_ingested(workspace, tmp_path):
    export = tmp_path / "export.jsonl"
    good = {"name": "jq-filter", "description": "Filter JSON with jq.", "license": "MIT",
            "content": "## Steps\n1. Read `data.json`.\n2. Run `jq '.items[]' data.json`.\n"}
    full = {"skill_md": "---\nname: full-md\ndescription: Whole text.\n---\n1. a\n2. b\n"}
    export.write_text("\n".join([json.dumps(good), '{"name": "broken", "descr', "", json.dumps([1, 2]),
                                 json.dumps(full), json.dumps({"name": "nodesc"})]) + "\n")
    report = ingest(workspace, [export])
    assert sorted(report.new) == ["export.jsonl#full-md", "export.jsonl#jq-filter"]
    reasons = {p.file.rsplit("#", 1)[1]: p.reason for p in report.problems}
    assert reasons["L2"].startswith("invalid JSON")
    assert "not an object" in reasons["L4"]
    assert "description" in reasons["L6"]
    row = skill_store.skills_table(workspace.db).set_index("name").loc["jq-filter"]
    assert row["source_kind"] == "jsonl" and row["n_steps"] == 2
