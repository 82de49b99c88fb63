"""analysis/rollout_folder.py: what a viewer may read of a rollout folder, with its files hostile."""
from __future__ import annotations

import os

from analysis import rollout_folder as rf


def _folder(root, rel="runs/r1/rollouts/ro-1"):
    path = root / rel
    (path / "verifier").mkdir(parents=True)
    (path / "trajectory.json").write_text("{}")
    (path / "agent.log").write_text("log\n")
    (path / "verifier" / "reward.txt").write_text("0\n")
    (path / "verifier" / "test-stdout.txt").write_text("x" * 50_000 + "\n2 failed, 2 passed\n")
    return rel, path


def test_downloads_and_verifier_files_are_listed_and_long_output_keeps_its_tail(tmp_path):
    rel, _ = _folder(tmp_path)
    out = rf.open_folder(tmp_path, rel)
    assert out.error is None and list(out.downloads) == ["trajectory.json", "agent.log"]
    by_name = {v.name: v for v in out.verifier}
    assert by_name["reward.txt"].text == "0\n" and by_name["reward.txt"].note == ""
    stdout = by_name["test-stdout.txt"]
    assert stdout.text.endswith("2 failed, 2 passed\n") and len(stdout.text) == rf.MAX_VERIFIER_CHARS
    assert stdout.note.startswith(f"last {rf.MAX_VERIFIER_CHARS:,} characters")


def test_a_folder_outside_the_workspace_missing_or_unrecorded_is_named_not_read(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    _folder(tmp_path, "elsewhere")
    assert "outside the workspace" in rf.open_folder(ws, "../elsewhere").error
    os.symlink(tmp_path / "elsewhere", ws / "linked")
    assert "outside the workspace" in rf.open_folder(ws, "linked").error
    assert "no such folder" in rf.open_folder(ws, "runs/none").error
    assert rf.open_folder(ws, None).error == "the rollout has no folder on record"


def test_links_inside_a_folder_and_oversized_files_are_not_read(tmp_path, monkeypatch):
    rel, path = _folder(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    os.symlink(secret, path / "verifier" / "ctrf.json")
    os.symlink(secret, path / "recording.cast")
    monkeypatch.setattr(rf, "MAX_DOWNLOAD_BYTES", 3)
    out = rf.open_folder(tmp_path, rel)
    assert "recording.cast" not in out.downloads and "recording.cast" not in out.too_big
    link = next(v for v in out.verifier if v.name == "ctrf.json")
    assert link.text == "" and link.note == "a link; not read"
    assert all("top secret" not in v.text for v in out.verifier)
    assert out.too_big == {"agent.log": 4} and list(out.downloads) == ["trajectory.json"]


def test_at_most_a_dozen_verifier_files(tmp_path):
    rel, path = _folder(tmp_path)
    for i in range(20):
        (path / "verifier" / f"f{i:02d}.txt").write_text(str(i))
    out = rf.open_folder(tmp_path, rel)
    assert len(out.verifier) == rf.MAX_VERIFIER_FILES + 1
    assert out.verifier[-1].note == f"{22 - rf.MAX_VERIFIER_FILES} more files not shown"
