"""Scenario inference: offline for every accepted skill, online through the replay server."""
from __future__ import annotations

import json
import re

import pytest

from pipeline.ingest.run import ingest
from pipeline.scenarios import offline
from pipeline.scenarios.run import STAGE, infer_offline, infer_online
from tests.helpers import scripted_scenario_pair as _scripted_pair, write_skill
from tests.workbench.llm.conftest import make_settings
from workbench.llm.replay_server import ReplayServer, Rule
from workbench.llm.runtime import open_client
from workbench.models import ScenarioPair
from workbench.store import scenarios as scen_store
from workbench.store import skills as skill_store
from workbench.store.status import workspace_status


def test_offline_gives_every_accepted_demo_skill_both_scenarios(demo_workspace):
    report = infer_offline(demo_workspace)
    status = workspace_status(demo_workspace.db)
    assert report.failed == [] and report.inferred == status["skills"]["accepted"] > 200
    assert status["scenarios"]["skills_with_scenarios"] == status["skills"]["accepted"]
    assert status["scenarios"]["raw"] == 2 * status["skills"]["accepted"]
    table = skill_store.skills_table(demo_workspace.db)
    sid = table[table["status"] == "accepted"].iloc[0]["id"]
    sc = scen_store.scenarios_for(demo_workspace.db, sid).set_index("role")
    assert set(sc.index) == {"pre", "post"}
    assert (sc["provider"] == "offline").all() and (sc["model"] == offline.MODEL).all()
    assert sc.loc["pre", "canonical"] != sc.loc["post", "canonical"]
    # incremental and deterministic: nothing left to do; forced again, the same sentences
    assert infer_offline(demo_workspace).todo == 0
    before = sc["canonical"].to_dict()
    infer_offline(demo_workspace, force=True)
    assert scen_store.scenarios_for(demo_workspace.db, sid).set_index("role")["canonical"].to_dict() == before


def test_online_fills_scenarios_and_a_second_run_makes_no_http_call(demo_workspace, tmp_path):
    with ReplayServer() as server:
        server.add_rule(Rule(match="Skill:", reply=_scripted_pair))
        settings = make_settings(server, concurrency=8)
        report = infer_online(demo_workspace, open_client(demo_workspace, settings))
        accepted = workspace_status(demo_workspace.db)["skills"]["accepted"]
        assert report.inferred == accepted and not report.failed
        assert server.stats.chat_requests == accepted
        assert workspace_status(demo_workspace.db)["scenarios"]["skills_with_scenarios"] == accepted
        with demo_workspace.db.read() as con:
            providers = con.execute("SELECT DISTINCT provider, model FROM scenarios").fetchall()
            canon = con.execute("SELECT canonical FROM scenarios WHERE role = 'pre' LIMIT 1").fetchone()[0]
        assert providers == [("openai-compatible", "test-model")]
        assert canon.endswith("precondition state")
        server.reset_stats()
        again = infer_online(demo_workspace, open_client(demo_workspace, settings))
        assert again.todo == 0 and server.stats.chat_requests == 0
        forced = infer_online(demo_workspace, open_client(demo_workspace, settings), force=True)
        assert forced.cache_hits == accepted and server.stats.chat_requests == 0
        llm = workspace_status(demo_workspace.db)["llm"]
        assert llm["calls"] == 2 * accepted and llm["cache_hits"] == accepted and llm["cost_usd"] > 0


def test_a_failing_skill_is_marked_and_the_batch_goes_on(demo_workspace):
    table = skill_store.skills_table(demo_workspace.db)
    accepted = table[table["status"] == "accepted"]
    victim = accepted.iloc[3]
    with ReplayServer() as server:
        server.add_rule(Rule(match=f"Skill: {victim['name']}\n", reply="I cannot answer in JSON, sorry."))
        server.add_rule(Rule(match="Skill:", reply=_scripted_pair))
        report = infer_online(demo_workspace, open_client(demo_workspace, make_settings(server, reask_limit=1)))
    assert [sid for sid, _ in report.failed] == [victim["id"]]
    assert report.inferred == len(accepted) - 1
    failure = scen_store.failure_for(demo_workspace.db, victim["id"])
    assert "InvalidStructuredOutput" in failure["reason"] or "StructuredOutputError" in failure["reason"]


def test_budget_cap_stops_inference_with_partial_results_kept(demo_workspace):
    with ReplayServer() as server:
        server.add_rule(Rule(match="Skill:", reply=_scripted_pair))
        settings = make_settings(server, concurrency=2)
        client = open_client(demo_workspace, settings, budget_usd=1.0)  # test-model prices are huge
        report = infer_online(demo_workspace, client)
        assert report.stopped and report.not_started > 0
        assert 0 < report.inferred < report.todo
        kept = workspace_status(demo_workspace.db)["scenarios"]["skills_with_scenarios"]
        assert kept == report.inferred
        # a second run with no cap does only the rest
        server.reset_stats()
        rest = infer_online(demo_workspace, open_client(demo_workspace, settings, budget_usd=1e9))
        assert rest.todo == report.todo - report.inferred
        assert server.stats.chat_requests == rest.todo
    assert STAGE == "scenario_inference"


# --------------------------------------------------------------------------- degenerate replies

DEGENERATE = {  # kind -> a reply a small model really gives (valid JSON, no state in it)
    "same_text": lambda name, desc: {"pre": _state(name, "pre"), "post": _state(name, "pre")},
    "schema_echo": lambda name, desc: {"pre": {**_state(name, "pre"), "goal": "what the user wants at that point"},
                                       "post": _state(name, "post")},
    "restates_description": lambda name, desc: {"pre": _state(name, "pre"),
                                                "post": {**_state(name, "post"), "canonical": desc}},
}


def _state(name: str, role: str) -> dict:
    return {"goal": f"{role} goal of {name}", "context": "a Linux shell", "capability": "bash and coreutils",
            "state": f"{role} state of {name}", "io_tool": "files in /data", "canonical": f"{name} {role}condition state"}


@pytest.fixture
def small_workspace(workspace, tmp_path):
    corpus = tmp_path / "corpus"
    for name, desc in (("tsv-tally", "Tally the rows of tab separated reports per region"),
                       ("log-window", "Cut a time window out of rotated application logs"),
                       ("dir-digest", "Write a checksum manifest for every file below a folder")):
        write_skill(corpus, name, description=desc)
    ingest(workspace, [corpus])
    assert workspace_status(workspace.db)["skills"]["accepted"] == 3
    return workspace


def _victim_requests(server, name: str) -> list[dict]:
    return [b for b in server.stats.bodies if f"Skill: {name}\n" in json.dumps(b["messages"]).replace("\\n", "\n")]


@pytest.mark.parametrize("kind", sorted(DEGENERATE))
def test_a_degenerate_reply_is_asked_again_once_and_a_good_second_reply_is_stored(small_workspace, kind):
    desc = "Cut a time window out of rotated application logs"
    with ReplayServer() as server:
        server.add_rule(Rule(match="Skill: log-window\n", times=1, reply=DEGENERATE[kind]("log-window", desc)))
        server.add_rule(Rule(match="Skill:", reply=_scripted_pair))
        report = infer_online(small_workspace, open_client(small_workspace, make_settings(server)))
        asked = _victim_requests(server, "log-window")
    assert report.inferred == 3 and report.failed == [] and report.reasked == 1
    assert len(asked) == 2
    follow_up = asked[1]["messages"][-1]["content"]
    assert follow_up.startswith("That reply cannot be used") and {"same_text": "the same", "schema_echo": "echoes",
                                                                   "restates_description": "restates"}[kind] in follow_up
    sid = _skill_id(small_workspace, "log-window")
    assert scen_store.failure_for(small_workspace.db, sid) is None
    stored = scen_store.scenarios_for(small_workspace.db, sid).set_index("role")["canonical"]
    assert stored["pre"].endswith(" precondition state") and stored["post"].endswith(" postcondition state")


@pytest.mark.parametrize("kind", sorted(DEGENERATE))
def test_a_reply_still_degenerate_after_the_reask_is_a_failure_with_its_reason_never_a_pair(small_workspace, kind):
    desc = "Cut a time window out of rotated application logs"
    with ReplayServer() as server:
        server.add_rule(Rule(match="Skill: log-window\n", reply=DEGENERATE[kind]("log-window", desc)))
        server.add_rule(Rule(match="Skill:", reply=_scripted_pair))
        report = infer_online(small_workspace, open_client(small_workspace, make_settings(server)))
        assert len(_victim_requests(server, "log-window")) == 2  # asked again once, not more
    sid = _skill_id(small_workspace, "log-window")
    assert report.inferred == 2 and [s for s, _ in report.failed] == [sid] and report.reasked == 1
    failure = scen_store.failure_for(small_workspace.db, sid)
    assert failure["reason"].startswith("DegenerateReply: still degenerate after one re-ask: " + kind)
    assert scen_store.scenarios_for(small_workspace.db, sid).empty
    assert workspace_status(small_workspace.db)["scenarios"]["skills_with_scenarios"] == 2


def _skill_id(ws, name: str) -> str:
    table = skill_store.skills_table(ws.db)
    return table[table["name"] == name].iloc[0]["id"]


def test_a_forced_rerun_that_finds_a_stored_pair_degenerate_removes_it(small_workspace):
    # A pair this model gave before the checks existed: a rerun must not leave it standing as valid.
    sid = _skill_id(small_workspace, "dir-digest")
    stale = DEGENERATE["same_text"]("dir-digest", "")
    with ReplayServer() as server:
        server.add_rule(Rule(match="Skill: dir-digest\n", reply=stale))
        server.add_rule(Rule(match="Skill:", reply=_scripted_pair))
        settings = make_settings(server)
        client = open_client(small_workspace, settings)
        scen_store.save_pairs(small_workspace.db, [(sid, ScenarioPair.model_validate(stale))], client.provider,
                              settings.model, "old-template")
        infer_online(small_workspace, client, force=True)
    assert scen_store.scenarios_for(small_workspace.db, sid).empty
    assert scen_store.failure_for(small_workspace.db, sid)["reason"].startswith("DegenerateReply")
    assert len(scen_store.scenarios_for(small_workspace.db, _skill_id(small_workspace, "tsv-tally"))) == 2
