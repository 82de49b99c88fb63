"""The command line as a user runs it: workspace choice, status, scenario inference."""
from __future__ import annotations

import json

from tests.helpers import cli, scripted_scenario_pair, write_skill
from workbench.cli import DEMO_TASKS
from workbench.demo_build import DEMO_LLM_TASKS
from workbench.llm.replay_server import ReplayServer, Rule

STATUS_SHAPE = {"skills": {"total", "accepted", "rejected", "pending"},
                "scenarios": {"skills_with_scenarios", "raw", "clusters"},
                "bridges": {"candidates", "verified"}, "paths": {"total"}, "tasks": {"total", "accepted"},
                "rollouts": {"total"}, "evolution": {"variants", "accepted"}, "llm": {"calls", "cache_hits", "cost_usd"}}



def test_status_json_has_the_design_shape_and_follows_workbench_home(tmp_path):
    corpus = tmp_path / "c"
    write_skill(corpus, "a/one", description="One.")
    home = tmp_path / "home-ws"
    assert cli("ingest", str(corpus), env={"WORKBENCH_HOME": str(home)}).returncode == 0
    out = cli("status", "--json", env={"WORKBENCH_HOME": str(home)})
    status = json.loads(out.stdout)
    assert {k: set(v) for k, v in status.items() if k in STATUS_SHAPE} == STATUS_SHAPE
    assert all(isinstance(v, (int, float)) for part in status.values() for v in part.values())
    assert status["skills"]["total"] == 1
    # --workspace wins over WORKBENCH_HOME
    other = cli("status", "--json", "--workspace", str(tmp_path / "other"), env={"WORKBENCH_HOME": str(home)})
    assert json.loads(other.stdout)["skills"]["total"] == 0


def test_scenarios_infer_offline_then_llm(tmp_path):
    corpus = tmp_path / "c"
    write_skill(corpus, "a/sort-it", description="Sort a file.", steps=["Run `sort in.txt > out.txt`.", "Check `out.txt`."])
    write_skill(corpus, "b/count-it", description="Count lines.", steps=["Run `wc -l in.txt`.", "Save the count."])
    ws = str(tmp_path / "ws")
    cli("--workspace", ws, "ingest", str(corpus))
    no_llm = cli("--workspace", ws, "scenarios", "infer", "--provider", "llm")
    assert no_llm.returncode == 2 and "No LLM endpoint configured" in no_llm.stderr
    off = cli("--workspace", ws, "scenarios", "infer", "--json")
    assert json.loads(off.stdout)["provider"] == "offline" and json.loads(off.stdout)["inferred"] == 2
    with ReplayServer() as server:
        server.add_rule(Rule(match="Skill:", reply=scripted_scenario_pair))
        env = {"WORKBENCH_LLM_BASE_URL": server.base_url, "WORKBENCH_LLM_MODEL": "replay", "OPENAI_API_KEY": "k"}
        on = cli("--workspace", ws, "scenarios", "infer", "--json", env=env)
        assert on.returncode == 0, on.stderr
        report = json.loads(on.stdout)
        assert report["provider"] == "openai-compatible" and report["inferred"] == 2
        assert server.stats.chat_requests == 2
        again = cli("--workspace", ws, "scenarios", "infer", "--force", "--json", env=env)
        assert json.loads(again.stdout)["cache_hits"] == 2 and server.stats.chat_requests == 2


def test_demo_populates_every_stage_once(tmp_path):
    ws = str(tmp_path / "demo")
    first = cli("--workspace", ws, "demo", timeout=900)
    assert first.returncode == 0, first.stderr
    status = json.loads(cli("--workspace", ws, "status", "--json").stdout)
    assert status["skills"]["total"] >= 200
    assert status["scenarios"]["skills_with_scenarios"] == status["skills"]["accepted"]
    assert status["scenarios"]["clusters"] > 0 and status["bridges"]["verified"] > 0
    # two sample batches of 200, and the demo's offline and LLM synthesis batches with their own paths
    assert status["paths"]["total"] == 400 + DEMO_TASKS + DEMO_LLM_TASKS
    # (two paths with the same steps make one task)
    assert status["tasks"]["total"] >= DEMO_TASKS // 2 + DEMO_LLM_TASKS // 2
    # (the LLM batch has one task rejected on purpose, after its repairs)
    assert status["tasks"]["accepted"] >= 0.9 * (status["tasks"]["total"] - 1)
    again = cli("--workspace", ws, "demo")
    assert again.returncode == 0 and again.stderr.strip() == ""  # nothing left to do, nothing redone
    assert json.loads(cli("--workspace", ws, "status", "--json").stdout) == status


def _options(parser, path=()):
    """(command path, option action) for every option of every (sub)command."""
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, path + (name,))
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_option_says_what_it_does():
    """`--n`, `--bridge-threshold`, `--verifier`, `--embedder`, `scenarios --concurrency`,
    `status --json` had no help text, and `synth --resume` named a hidden `--run-id`;
    `app --port` neither."""
    import argparse
    from workbench.cli import build_parser
    silent = [f"{' '.join(path)} {a.option_strings[-1]}" for path, a in _options(build_parser())
              if not a.help or a.help == argparse.SUPPRESS]
    assert silent == []


def test_synth_help_lists_what_resume_and_lengths_need():
    r = cli("synth", "--help", env={"COLUMNS": "200"})
    assert r.returncode == 0
    for option in ("--run-id", "--min-len", "--max-len", "--concurrency", "--resume"):
        assert option in r.stdout
    assert "on --resume the run's own value" in r.stdout


def test_sample_says_when_the_graph_has_fewer_distinct_paths_than_asked(tmp_path):
    corpus = tmp_path / "c"
    write_skill(corpus, "a/sort-it", description="Sort a file.", steps=["Run `sort in.txt > out.txt`.", "Check `out.txt`."])
    write_skill(corpus, "b/count-it", description="Count lines.", steps=["Run `wc -l out.txt`.", "Save the count."])
    ws = str(tmp_path / "ws")
    for args in (("ingest", str(corpus)), ("scenarios", "infer", "--provider", "offline"),
                 ("graph", "build", "--embedder", "hashing", "--verifier", "offline")):
        r = cli("--workspace", ws, *args)
        assert r.returncode == 0, r.stdout + r.stderr
    r = cli("--workspace", ws, "sample", "--sampler", "single-skill", "--n", "30", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["n_paths"] < 30 and report["short"] == 30 - report["n_paths"]       # no path twice
    assert f"the graph gave only {report['n_paths']} distinct paths of the 30 asked" in report["note"]
    r = cli("--workspace", ws, "sample", "--sampler", "single-skill", "--n", "30")
    assert "Note: the graph gave only" in " ".join(r.stderr.split())
