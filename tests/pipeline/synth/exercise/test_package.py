"""A skill package read for shipping is hostile input: links, escapes, binaries and sizes are bounded."""
from __future__ import annotations

import os

from pipeline.synth.exercise.package import MAX_FILE_BYTES, read_package
from pipeline.synth.exercise.script_facts import script_facts

from .skills import tree_with

BODY = "---\nname: x\n---\n# x\n"


def test_links_escapes_binaries_and_big_files_stay_out(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("token")
    pkg = tree_with(tmp_path / "pkg", {"SKILL.md": BODY, "scripts/ok.py": "print(1)\n", "big.txt": "x" * (MAX_FILE_BYTES + 1)})
    (pkg / "bin.dat").write_bytes(b"\x00\x01")
    os.symlink(outside, pkg / "link.txt")
    (pkg / ".env").write_text("KEY=1\n")
    listed = ["SKILL.md", "scripts/ok.py", "big.txt", "bin.dat", "link.txt", ".env", "../secret.txt", "a b.txt"]
    got = read_package(str(pkg), listed, BODY, name="My Skill!", skill_id="abc")
    assert got.slug == "my-skill" and got.names() == ["SKILL.md", "scripts/ok.py"]
    assert "big.txt left out (size caps)" in got.note


def test_a_package_changed_since_ingest_ships_only_the_stored_skill_md(tmp_path):
    pkg = tree_with(tmp_path / "pkg", {"SKILL.md": BODY + "edited later\n", "scripts/ok.py": "print(1)\n"})
    got = read_package(str(pkg), ["SKILL.md", "scripts/ok.py"], BODY, name="x", skill_id="abc")
    assert got.names() == ["SKILL.md"] and got.text("SKILL.md") == BODY and "changed on disk" in got.note


def test_a_script_nested_beyond_the_parser_is_a_reason_not_a_crash():
    deep = "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    facts = script_facts("scripts/deep.py", deep)
    assert not facts.runnable and "does not parse" in facts.problem
