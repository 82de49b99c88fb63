"""`workbench skills export` and `workbench tasks export`, run as a user would (a subprocess),
on the demo corpus ingested into a real DuckDB workspace and on a synthesis run with real bundles."""
from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

from tests.helpers import cli
from tests.pipeline.export.test_harbor_job_import import hand_job  # noqa: F401  (a fixture)
from tests.pages.synth_fixture import RUN_ID, add_cancelled_run, make_synth_fixture
from workbench.store import tasks as task_store
from workbench.store.skills import skill_detail, skills_table
from workbench.store.status import workspace_status


def _jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_skills_export_has_one_row_per_current_skill_with_the_rules_that_fired(demo_workspace):
    ws = demo_workspace
    r = cli("skills", "export", "--workspace", str(ws.root))
    assert r.returncode == 0, r.stderr
    rows = _jsonl(r.stdout)
    counts = workspace_status(ws.db)["skills"]
    assert len(rows) == counts["total"] and len({x["id"] for x in rows}) == counts["total"]
    assert sum(x["status"] == "rejected" for x in rows) == counts["rejected"] > 0
    assert set(rows[0]) == {"id", "name", "source_path", "status", "reason", "category", "tools", "binaries", "rules"}

    # A skill of the demo corpus rejected for needing a desktop: the rule, its evidence and line.
    gui = next(x for x in rows if x["name"] == "archive-manager-bulk-extract")
    assert gui["status"] == "rejected" and Path(gui["source_path"]).name == "archive-manager-bulk-extract"
    fired = {f["rule"]: f for f in gui["rules"]}
    assert fired["executable.gui"]["verdict"] == "fail"
    assert "Nautilus" in fired["executable.gui"]["evidence"]
    assert fired["executable.gui"]["location"] == "SKILL.md:24" and fired["executable.gui"]["line"] == 24
    assert gui["reason"] == "gui"   # the one label reason the rejection shows
    assert "apt-get" in gui["binaries"] and "Bash" in gui["tools"]

    # Every rejected row names each failing rule the store holds for it, with the same evidence.
    by_id = {x["id"]: x for x in rows}
    for sid in skills_table(ws.db).query("status == 'rejected'")["id"]:
        verdicts = skill_detail(ws.db, sid)["verdicts"]
        expected = {(v.rule, v.outcome, v.evidence) for v in verdicts.itertuples() if v.outcome != "pass"}
        got = {(f["rule"], f["verdict"], f["evidence"]) for f in by_id[sid]["rules"]}
        assert got == expected and any(v == "fail" for _, v, _ in got), sid
    # nothing is curated here, so an accepted skill is one where every rule passed
    assert all(x["rules"] == [] and x["reason"] is None for x in rows if x["status"] == "accepted")
    assert all(x["reason"] for x in rows if x["status"] == "rejected")


def test_skills_export_status_filter_and_csv(demo_workspace, tmp_path):
    ws = demo_workspace
    counts = workspace_status(ws.db)["skills"]
    r = cli("skills", "export", "--workspace", str(ws.root), "--status", "rejected")
    assert r.returncode == 0, r.stderr
    rejected = _jsonl(r.stdout)
    assert len(rejected) == counts["rejected"] and {x["status"] for x in rejected} == {"rejected"}

    out = tmp_path / "skills.csv"
    r = cli("skills", "export", "--workspace", str(ws.root), "--format", "csv",
            "--status", "accepted", "--status", "rejected", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and f"Wrote {counts['accepted'] + counts['rejected']} rows" in r.stderr
    table = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert len(table) == counts["accepted"] + counts["rejected"]
    assert list(table[0]) == ["id", "name", "source_path", "status", "reason", "category", "tools", "binaries", "rules"]
    gui = next(x for x in table if x["name"] == "archive-manager-bulk-extract")
    assert "apt-get" in gui["binaries"].split("; ")
    rules = json.loads(gui["rules"])
    assert rules[0]["rule"] == "executable.gui" and rules[0]["line"] == 24
    by_name = {x["name"]: x for x in rejected}
    assert {x["name"]: json.loads(x["rules"]) for x in table if x["status"] == "rejected"} == \
        {n: x["rules"] for n, x in by_name.items()}


def test_skills_export_bad_input_exits_2_and_keeps_the_old_file(demo_workspace, tmp_path):
    ws = demo_workspace
    r = cli("skills", "export", "--workspace", str(ws.root), "--status", "approved")
    assert r.returncode == 2 and "invalid choice: 'approved'" in r.stderr and r.stdout == ""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file, not a folder\n")
    r = cli("skills", "export", "--workspace", str(ws.root), "--out", str(blocker / "skills.jsonl"))
    assert r.returncode == 2 and "Cannot write --out" in r.stderr and str(blocker / "skills.jsonl") in r.stderr
    assert r.stdout == "" and blocker.read_text() == "a file, not a folder\n"


def test_tasks_export_rows_carry_steps_with_skill_ids(graph_workspace, tmp_path):
    ws = graph_workspace
    made = make_synth_fixture(ws)
    add_cancelled_run(ws, made)
    r = cli("tasks", "export", "--workspace", str(ws.root))
    assert r.returncode == 0, r.stderr
    rows = _jsonl(r.stdout)
    assert len(rows) == len(task_store.tasks_frame(ws.db)) == 4
    by_id = {x["task_id"]: x for x in rows}
    for t in made:
        row = by_id[t.task_id]
        assert (row["name"], row["verdict"], row["category"]) == (t.name, t.verdict, t.category)
        folder = Path(row["bundle_dir"])
        assert folder.is_absolute() and (folder / "task.toml").is_file()
        assert folder == (ws.root / "tasks" / t.task_id).resolve()
        # the path's skills in order, with their names; recipes as the store recorded them
        assert [s["skill_id"] for s in row["steps"]][:len(t.skill_ids)] == t.skill_ids
        assert [s["skill_name"] for s in row["steps"]][:len(t.skill_ids)] == t.skill_names
        assert [s["recipe"] for s in row["steps"]][:2] == ["log-analysis", "text-file"]
        assert all(s["fidelity"] is None and s["score"] is None and s["evidence"] is None for s in row["steps"])
        assert [s["step"] for s in row["steps"]] == list(range(1, len(row["steps"]) + 1))

    out = tmp_path / "tasks.jsonl"
    r = cli("tasks", "export", "--workspace", str(ws.root), "--run-id", RUN_ID, "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(x["task_id"] for x in _jsonl(out.read_text())) == sorted(t.task_id for t in made)

    r = cli("tasks", "export", "--workspace", str(ws.root), "--run-id", "synth-nosuchrun")
    assert r.returncode == 2 and "No synthesis run 'synth-nosuchrun'" in r.stderr and r.stdout == ""


# --- export trajectories, import harbor-job ---------------------------------------------------

def test_export_trajectories_writes_the_dataset_and_its_card(graph_workspace, tmp_path):
    from tests.pages.rollouts_fixture import make_rollouts_fixture
    ws = graph_workspace
    fx = make_rollouts_fixture(ws)
    out = tmp_path / "sft"
    r = cli("export", "trajectories", str(out), "--workspace", str(ws.root), "--filter", "success",
            "--episodes", "last")
    assert r.returncode == 0, r.stderr
    rows = _jsonl((out / "conversations.jsonl").read_text())
    passed = [x for x in fx.of(agent="terminus-2") if x["passed"]]
    assert len(rows) == len(passed) and {x["agent"] for x in rows} == {"terminus-2"}
    assert "scripted agents left out" in r.stdout and (out / "README.md").exists()

    r = cli("export", "trajectories", str(tmp_path / "atif"), "--workspace", str(ws.root), "--format", "atif",
            "--run", "rollfix-oracle", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["kept"] == {"oracle": len(fx.of(agent="oracle"))} and report["format"] == "atif"
    assert len(list((tmp_path / "atif" / "trajectories").glob("*.json"))) == len(fx.of(agent="oracle"))

    r = cli("export", "trajectories", str(tmp_path / "x"), "--workspace", str(ws.root), "--run", "nope")
    assert r.returncode == 2 and "no rollout run 'nope'" in r.stderr and not (tmp_path / "x").exists()


def test_import_harbor_job_reports_every_trial_it_could_not_take(hand_job, tmp_path):
    ws, job = hand_job
    r = cli("import", "harbor-job", str(job), "--workspace", str(ws.root))
    assert r.returncode == 1, r.stdout + r.stderr            # some imported, some not: said, and non-zero
    assert "imported 5 trial(s)" in r.stdout
    assert "matched no task: old__changed: " in r.stderr and "could not be read: sum-a__garbage: " in r.stderr
    r = cli("import", "harbor-job", str(job), "--workspace", str(ws.root), "--json")
    report = json.loads(r.stdout)
    assert len(report["imported"]) == 5 and all(t["again"] for t in report["imported"])

    clean = tmp_path / "clean-jobs" / "j"
    shutil.copytree(job / "sum-a__good1", clean / "sum-a__good1")
    r = cli("import", "harbor-job", str(clean.parent), "--workspace", str(ws.root))
    assert r.returncode == 0, r.stderr
    (tmp_path / "nothing").mkdir()
    r = cli("import", "harbor-job", str(tmp_path / "nothing"), "--workspace", str(ws.root))
    assert r.returncode == 2 and "no Harbor trial folders" in r.stderr
