"""`export trajectories`: ATIF files Harbor's validator accepts, chat rows equal to what Harbor's
own traces export makes of the same trajectories, Parquet with the same rows, the filters, the
scripted agents left out of SFT formats unless asked, 14-gram decontamination with the dropped
rows named, and the dataset card. Rollouts: the Rollouts pages' fixture (real store rows and
rollout folders)."""
from __future__ import annotations

import json
import subprocess

import duckdb
import pytest

from pipeline.agents.protocol import AGENT_LABELS
from pipeline.export.harbor_runner import harbor_env, harbor_python
from pipeline.export.trajectories import TrajectoryExportError, export_trajectories
from pipeline.trajectories.atif import validate_with_harbor
from tests.pages.rollouts_fixture import PLAN, make_rollouts_fixture

ROW_KEYS = {"conversations", "agent", "model", "model_provider", "date", "task", "episode", "run_id", "trial_name",
            "result", "reward", "rollout_id", "task_id"}


@pytest.fixture
def fx(graph_workspace):
    return graph_workspace, make_rollouts_fixture(graph_workspace)


def _agent_turns(ws, rec) -> int:
    doc = json.loads((ws.root / rec["folder"] / "trajectory.json").read_text())
    return sum(1 for s in doc["steps"] if s["source"] == "agent")


def _jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_chat_rows_leave_scripted_agents_out_and_say_so(fx, tmp_path):
    ws, f = fx
    out = tmp_path / "sft"
    report = export_trajectories(ws, out, fmt="chat-jsonl", flt="all")

    rows = _jsonl(out / "conversations.jsonl")
    t2 = f.of(agent="terminus-2")
    assert {r["agent"] for r in rows} == {"terminus-2"}
    assert len(rows) == sum(_agent_turns(ws, r) for r in t2)          # one row per episode, as Harbor's export
    assert all(set(r) == ROW_KEYS for r in rows)
    assert report.scripted_left_out == {"nop": len(f.of(agent="nop")), "oracle": len(f.of(agent="oracle")),
                                        "ablation": len(f.of(agent="ablation"))}
    first = next(r for r in rows if r["episode"] == "episode-0")
    assert [m["role"] for m in first["conversations"]] == ["user", "user", "assistant"]   # system, user, reply
    assert first["trial_name"] == first["rollout_id"] and first["run_id"].startswith("rollfix-t2-")
    assert first["task"].startswith("skillgraph/") and first["model"] in ("gpt-4o-mini", "qwen3-coder")
    card = (out / "README.md").read_text()
    assert AGENT_LABELS["terminus-2"] in card and "left out of SFT formats unless asked" in card
    assert f"{sum(report.scripted_left_out.values())} rollout(s)" in card
    assert "Not decontaminated" in card and "`all`" in card

    asked = export_trajectories(ws, tmp_path / "with-oracle", fmt="chat-jsonl", agents=["oracle", "terminus-2"])
    assert set(asked.kept) == {"oracle", "terminus-2"} and not asked.scripted_left_out
    assert AGENT_LABELS["oracle"] in (tmp_path / "with-oracle" / "README.md").read_text()


def test_filters_complete_and_success(fx, tmp_path):
    ws, f = fx
    t2 = f.of(agent="terminus-2")
    success = export_trajectories(ws, tmp_path / "s", fmt="chat-jsonl", flt="success", episodes="last")
    assert sum(success.kept.values()) == sum(r["passed"] for r in t2)
    rows = _jsonl(tmp_path / "s" / "conversations.jsonl")
    assert len(rows) == sum(r["passed"] for r in t2) and {r["reward"] for r in rows} == {1.0}
    assert {r["result"] for r in rows} == {"1.0"}
    complete = export_trajectories(ws, tmp_path / "c", fmt="chat-jsonl", flt="complete", episodes="last")
    finished = [r for r in t2 if r["passed"] or r["failure_class"] == "test_assertion"]
    assert sum(complete.kept.values()) == len(finished)
    assert complete.filtered_out == len(t2) - len(finished)


def test_atif_files_pass_harbors_validator(fx, tmp_path):
    ws, f = fx
    out = tmp_path / "atif"
    report = export_trajectories(ws, out, fmt="atif")
    files = sorted((out / "trajectories").glob("*.json"))
    assert len(files) == len(f.records) == sum(report.rows.values())     # atif keeps every agent
    assert validate_with_harbor(files) == []
    index = _jsonl(out / "index.jsonl")
    assert {i["rollout_id"] for i in index} == {r["rollout_id"] for r in f.records}
    assert all((out / i["file"]).exists() for i in index)
    card = (out / "README.md").read_text()
    assert "ATIF" in card and "ATIF keeps every agent's trajectory" in card
    probes = len(f.of(agent="nop")) + len(f.of(agent="oracle")) + len(f.of(agent="ablation"))
    assert f"so {probes} of theirs are included" in card


def test_parquet_holds_the_same_rows_as_jsonl(fx, tmp_path):
    ws, _ = fx
    export_trajectories(ws, tmp_path / "j", fmt="chat-jsonl")
    export_trajectories(ws, tmp_path / "p", fmt="parquet")
    want = sorted(_jsonl(tmp_path / "j" / "conversations.jsonl"), key=lambda r: (r["rollout_id"], r["episode"]))
    con = duckdb.connect()
    cur = con.execute("SELECT * FROM read_parquet(?) ORDER BY rollout_id, episode",
                      [str(tmp_path / "p" / "conversations.parquet")])
    names = [d[0] for d in cur.description]
    got = [dict(zip(names, row)) for row in cur.fetchall()]
    assert set(names) == ROW_KEYS
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        assert [dict(m) for m in g["conversations"]] == w["conversations"]
        assert (g["agent"], g["task"], g["episode"], g["reward"]) == (w["agent"], w["task"], w["episode"], w["reward"])


def test_rows_equal_harbors_own_traces_export(fx, tmp_path):
    """Harbor's extract_conversations_from_trajectory (in .harbor-venv) on the same files."""
    ws, f = fx
    export_trajectories(ws, tmp_path / "j", fmt="chat-jsonl")
    ours = _jsonl(tmp_path / "j" / "conversations.jsonl")
    picks = [r for r in f.of(agent="terminus-2")][:4]
    script = """
import json, sys
from pathlib import Path
from harbor.utils.traces_utils import extract_conversations_from_trajectory
meta = {"agent_name": "terminus-2", "model_name": "m", "model_provider": "p", "start_time": "", "run_id": "r",
        "task_name": "t", "trial_name": "x", "raw_metadata": {}}
out = {p: [c["conversations"] for c in extract_conversations_from_trajectory(Path(p), meta)] for p in sys.argv[1:]}
print(json.dumps(out))
"""
    paths = [str(ws.root / r["folder"] / "trajectory.json") for r in picks]
    proc = subprocess.run([str(harbor_python()), "-c", script, *paths], capture_output=True, text=True,
                          env=harbor_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    harbor = json.loads(proc.stdout.strip().splitlines()[-1])
    for rec, path in zip(picks, paths):
        mine = [r["conversations"] for r in sorted((r for r in ours if r["rollout_id"] == rec["rollout_id"]),
                                                   key=lambda r: int(r["episode"].split("-")[1]))]
        assert mine == harbor[path] and mine


QUOTED = ("Rotate the nightly access logs of the billing gateway and keep exactly seven compressed copies "
          "under the archive folder")


def test_decontamination_drops_and_names_rows_sharing_a_14_gram(fx, tmp_path):
    ws, f = fx
    t2 = f.of(agent="terminus-2")
    leaked = t2[0]
    path = ws.root / leaked["folder"] / "trajectory.json"
    doc = json.loads(path.read_text())
    user = next(s for s in doc["steps"] if s["source"] == "user")
    user["message"] = f"# A task\n\n{QUOTED}.\n"          # this rollout's task text is a benchmark's
    path.write_text(json.dumps(doc))
    bench = tmp_path / "bench" / "some-task"
    bench.mkdir(parents=True)
    (bench / "instruction.md").write_text(f"# Log rotation\n\n{QUOTED.lower()}, then report.\n")
    (bench / "other.txt").write_text("nothing in common with the rollouts at all here\n")

    report = export_trajectories(ws, tmp_path / "d", fmt="chat-jsonl", benchmark=tmp_path / "bench")
    rows = _jsonl(tmp_path / "d" / "conversations.jsonl")
    assert {d.rollout_id for d in report.contaminated} == {leaked["rollout_id"]}
    assert len(report.contaminated) == _agent_turns(ws, leaked)          # each of its episodes, named
    assert all("some-task/instruction.md" in d.why and d.episode for d in report.contaminated)
    assert leaked["rollout_id"] not in {r["rollout_id"] for r in rows}
    assert len(rows) == sum(_agent_turns(ws, r) for r in t2) - len(report.contaminated)
    assert report.benchmark_files == 2
    card = (tmp_path / "d" / "README.md").read_text()
    assert f"{len(report.contaminated)} rows dropped" in card and "some-task/instruction.md" in card
    assert leaked["rollout_id"] in card

    atif = export_trajectories(ws, tmp_path / "a", fmt="atif", benchmark=tmp_path / "bench")
    assert [d.rollout_id for d in atif.contaminated] == [leaked["rollout_id"]]
    assert sum(atif.rows.values()) == len(f.records) - 1


def test_bad_options_are_refused_before_anything_is_written(fx, tmp_path):
    ws, _ = fx
    with pytest.raises(TrajectoryExportError, match="no rollout run 'nope'"):
        export_trajectories(ws, tmp_path / "x", run_id="nope")
    with pytest.raises(TrajectoryExportError, match="--benchmark: benchmark folder .* does not exist"):
        export_trajectories(ws, tmp_path / "x", benchmark=tmp_path / "missing")
    (tmp_path / "file").write_text("")
    with pytest.raises(TrajectoryExportError, match="is not a folder"):
        export_trajectories(ws, tmp_path / "file")
    with pytest.raises(TrajectoryExportError, match=r"--agents: no rollouts of 'orcale' here \(agents with rollouts: "
                                                    r"ablation, nop, oracle, terminus-2\)"):
        export_trajectories(ws, tmp_path / "x", agents=["orcale", "terminus-2"])   # a typo: not an empty dataset
    assert not (tmp_path / "x").exists()


def test_one_run_and_unreadable_trajectories(fx, tmp_path):
    ws, f = fx
    mini = f.of(agent="terminus-2", model="gpt-4o-mini")
    broken = mini[0]
    (ws.root / broken["folder"] / "trajectory.json").write_text('{"schema_version": "ATIF-v1.8", "steps": "no"}')
    gone = mini[1]
    (ws.root / gone["folder"] / "trajectory.json").unlink()
    report = export_trajectories(ws, tmp_path / "one", fmt="chat-jsonl", run_id="rollfix-t2-mini", episodes="last")
    assert report.considered == len(mini) == sum(len(v) for k, v in PLAN.items() if k[2] == "gpt-4o-mini")
    assert sum(report.kept.values()) == len(mini) - 2
    assert [d.rollout_id for d in report.unreadable] == [broken["rollout_id"]]
    assert "not valid ATIF" in report.unreadable[0].why and broken["folder"] in report.unreadable[0].why
    assert report.no_trajectory == [gone["rollout_id"]]
    assert "Unreadable trajectories: 1" in (tmp_path / "one" / "README.md").read_text()


@pytest.mark.docker
@pytest.mark.slow
def test_real_rollouts_export_as_atif_harbor_accepts_and_as_chat_rows(graph_workspace, tmp_path):
    """Rollouts the workbench really ran (terminus-2 against the scripted replay model that types
    the oracle's commands, and the ablation probe) on a synthesized demo task."""
    from pipeline.rollouts.batch import run_rollouts
    from pipeline.synth.batch import run_synth
    from workbench.store import tasks as task_store
    ws = graph_workspace
    run_synth(ws, n_paths=2, seed=7, concurrency=2)
    task_id = task_store.accepted_tasks(ws.db).task_id.iloc[0]
    t2 = run_rollouts(ws, agent="terminus-2", task_ids=[task_id], k=2, replay="oracle", concurrency=2)
    probe = run_rollouts(ws, agent="ablation", task_ids=[task_id], k=1)
    assert t2.ran == 2 and probe.ran == 1, (t2.as_dict(), probe.as_dict())

    atif = export_trajectories(ws, tmp_path / "atif", fmt="atif")
    files = sorted((tmp_path / "atif" / "trajectories").glob("*.json"))
    assert len(files) == 3 and validate_with_harbor(files) == []

    report = export_trajectories(ws, tmp_path / "rows", fmt="chat-jsonl", episodes="last")
    rows = _jsonl(tmp_path / "rows" / "conversations.jsonl")
    assert report.scripted_left_out == {"ablation": 1} and len(rows) == 2
    assert {r["agent"] for r in rows} == {"terminus-2"} and {r["run_id"] for r in rows} == {t2.run_id}
    assert all(r["conversations"][-1]["role"] == "assistant" and len(r["conversations"]) >= 3 for r in rows)
    assert atif.kept == {"terminus-2": 2, "ablation": 1}


def test_the_card_says_a_terminus2_run_against_the_replay_model_is_a_test_doubles():
    """Issue 22.4: an export's card called scripted terminus-2 rollouts "terminus-2 (LLM agent)"."""
    from pipeline.export.dataset_card import _label
    scripted = _label("terminus-2", "x", ["scripted-terminus:oracle (test double)"])
    assert "LLM agent" not in scripted and "test double" in scripted
    assert "test double" in _label("harbor:terminus-2", "x", ["openai/scripted-terminus"])
    assert _label("terminus-2", "x", ["gpt-4o-mini"]) == AGENT_LABELS["terminus-2"]
    assert "some runs against a scripted replay model" in _label("terminus-2", "x", ["gpt-4o-mini", "scripted-replay"])
