"""Packages parsed and filtered in worker processes give what one process gives, in the same
order, hostile packages included; a package stored unchanged skips the rules."""
from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import write_skill
from pipeline.ingest import package_workers, packages
from pipeline.ingest.run import ingest
from workbench.workspace import Workspace


def _corpus(root):
    for i in range(24):
        write_skill(root, f"tools/tool-{i:02d}", description=f"Count the lines of data set {i} in the terminal.",
                    steps=[f"List `/data/{i}` with `ls -la`.", f"Run `python scripts/count.py /data/{i}`."])
        (root / f"tools/tool-{i:02d}/scripts").mkdir()
        (root / f"tools/tool-{i:02d}/scripts/count.py").write_text(
            "import os, requests\n" * (i % 3) + f"print(len(open('/data/{i}').readlines()))\n")
    (root / "bad/binary").mkdir(parents=True)
    (root / "bad/binary/SKILL.md").write_bytes(b"---\0\0\xff" * 100)
    write_skill(root, "bad/big-file", description="Has a file over the cap.")
    with open(root / "bad/big-file/blob.bin", "wb") as fh:
        fh.truncate(packages.MAX_FILE_BYTES + 1)
    write_skill(root, "bad/link-out", description="Links outside the corpus.")
    os.symlink("/etc", root / "bad/link-out/etc")
    write_skill(root, "bad/no-name", body="# x\n").joinpath("SKILL.md").write_text("---\ndescription: d\n---\n# x\n")


def _store(ws: Workspace):
    with ws.db.read() as con:
        verdicts = con.execute("SELECT s.skill_key, v.rule, v.outcome, v.evidence, v.location FROM skills s "
                               "JOIN filter_verdicts v ON v.skill_id = s.id ORDER BY 1, 2").fetchall()
        problems = con.execute("SELECT file, reason FROM ingest_errors ORDER BY 1").fetchall()
    return verdicts, problems


def test_worker_processes_give_what_one_process_gives(tmp_path, monkeypatch):
    _corpus(tmp_path / "corpus")
    serial = ingest(Workspace.open(tmp_path / "ws1"), [tmp_path / "corpus"], workers=1)
    monkeypatch.setattr(package_workers, "POOL_MIN_PACKAGES", 1)
    monkeypatch.setattr(package_workers, "BLOCK_PACKAGES", 3)
    pooled = ingest(Workspace.open(tmp_path / "ws2"), [tmp_path / "corpus"], workers=2)
    assert pooled.new == serial.new and len(serial.new) == 24
    assert [p.model_dump() for p in pooled.problems] == [p.model_dump() for p in serial.problems]
    assert {Path(p.source).name for p in serial.problems} == {"binary", "big-file", "link-out", "no-name"}
    assert _store(Workspace.open(tmp_path / "ws1")) == _store(Workspace.open(tmp_path / "ws2"))


def test_parse_all_keeps_the_order_found_and_reports_progress(tmp_path, monkeypatch):
    _corpus(tmp_path / "corpus")
    refs, _ = packages.discover([tmp_path / "corpus"])
    monkeypatch.setattr(package_workers, "POOL_MIN_PACKAGES", 1)
    seen = []
    items = list(package_workers.parse_all(refs, {}, lambda done, total, what: seen.append((done, what)), workers=2))
    keys = [it[0].skill_key if isinstance(it, tuple) else it.source for it in items]
    assert keys == [r.key if isinstance(it, tuple) else str(r.folder) for r, it in zip(refs, items)]
    assert [d for d, _ in seen] == list(range(len(refs))) + [len(refs)]


def test_a_package_stored_unchanged_skips_the_rules(tmp_path):
    write_skill(tmp_path / "corpus", "text/count-words", description="Count words in text files.")
    [ref], _ = packages.discover([tmp_path / "corpus"])
    skill, verdicts = package_workers.parse_package(ref, {})
    assert verdicts
    skill_again, none = package_workers.parse_package(ref, {skill.content_hash[:16]: ref.key})
    assert none is None and skill_again == skill
    # stored under another key: a copy, a skill of its own, filtered
    assert package_workers.parse_package(ref, {skill.content_hash[:16]: "elsewhere/x"})[1]
