"""Faults for the first servable paths of the latest sample batch, resolved when asked; the
--faults values and files; the demo price in config.json."""
from __future__ import annotations

import json

import pytest

from pipeline.graph.sample_run import sample
from pipeline.synth.llm.scripted import FAULTS
from pipeline.synth.llm.scripted_faults import (
    ALL_FAULTS, DEMO_PRICE, REPLAY_MODEL, ROUTE_FAULTS, FaultSpecError, LatestBatchFaults, read_fault_spec,
    scripted_replies, write_demo_price)
from workbench.llm.settings import load_settings, save_settings
from workbench.store import graph as graph_store


def _latest_ids(ws) -> list[str]:
    return graph_store.batch_path_ids(ws.db, graph_store.sample_batches(ws.db)["batch_id"].iloc[0])


def test_faults_go_to_the_first_servable_paths_of_the_latest_batch_in_order(graph_workspace):
    ws = graph_workspace
    ids = _latest_ids(ws)
    unservable = {ids[1], ids[3]}
    told = []
    faults = LatestBatchFaults(ws, ["test_bug", "exhaust", "broken_dockerfile"], lambda p: p not in unservable,
                               on_assign=lambda b, given: told.append((b, given)))
    assert faults.get(ids[0]) == "test_bug"
    assert ids[1] not in faults and faults.get(ids[2]) == "exhaust" and faults[ids[4]] == "broken_dockerfile"
    assert faults.get(ids[5]) is None and len(faults) == 3
    batch = graph_store.sample_batches(ws.db)["batch_id"].iloc[0]
    assert told == [(batch, {ids[0]: "test_bug", ids[2]: "exhaust", ids[4]: "broken_dockerfile"})]


def test_a_batch_sampled_later_gets_the_same_faults_when_its_first_path_is_asked_for(graph_workspace):
    ws = graph_workspace
    old = _latest_ids(ws)
    faults = LatestBatchFaults(ws, ["crashing_solution"], lambda p: True)
    assert faults.get(old[0]) == "crashing_solution"
    sample(ws, "inverse-frequency", 5, seed=9)          # what `workbench synth` does at its start
    new = _latest_ids(ws)
    assert new[0] != old[0]
    assert faults.get(new[0]) == "crashing_solution" and faults.get(old[0]) == "crashing_solution"
    assert faults.get(new[1]) is None


def test_fixed_faults_by_path_id_and_no_order(graph_workspace):
    faults = LatestBatchFaults(graph_workspace, [], lambda p: True, fixed={"p-7": "missing_file"})
    assert dict(faults) == {"p-7": "missing_file"} and faults.get("p-8") is None
    with pytest.raises(ValueError, match="faults\\[0\\]: unknown fault 'nope'"):
        LatestBatchFaults(graph_workspace, ["nope"], lambda p: True)


def test_scripted_replies_break_the_first_reply_of_the_assigned_path(graph_workspace):
    scripted, faults = scripted_replies(graph_workspace, ["broken_dockerfile"])
    pid = next(p for p in _latest_ids(graph_workspace) if not isinstance(scripted.task(p), str))
    body = {"messages": [{"role": "system", "content": "Stage: synth_environment."},
                         {"role": "user", "content": f"Path: {pid}\n"}]}
    reply = scripted.answer(body)
    assert faults[pid] == "broken_dockerfile"
    assert any("/app/seed/defaults.ini" in c for c in reply["setup_commands"])


def test_fault_specs(tmp_path):
    assert read_fault_spec("none") == ((), {})
    assert read_fault_spec("routes") == (ROUTE_FAULTS, {})
    every, _ = read_fault_spec("all")
    assert every == ALL_FAULTS and set(every) == set(FAULTS) and len(every) == len(FAULTS)
    assert every[:len(ROUTE_FAULTS)] == ROUTE_FAULTS
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(["test_bug", "exhaust"]))
    assert read_fault_spec(str(listed)) == (("test_bug", "exhaust"), {})
    by_id = tmp_path / "ids.json"
    by_id.write_text(json.dumps({"abc-0": "never_ends"}))
    assert read_fault_spec(str(by_id)) == ((), {"abc-0": "never_ends"})


@pytest.mark.parametrize("content, message", [
    ('["test_bug", "tset_bug"]', r"list\.json\[1\]: unknown fault 'tset_bug'; known: broken_dockerfile"),
    ('{"abc-0": "nope"}', r"list\.json: path 'abc-0': unknown fault 'nope'"),
    ('{"abc-0": 3}', r"list\.json: expected a list of fault names or an object \{path_id: fault\}, got dict"),
    ("[1, 2", r"list\.json: not a JSON file"),
])
def test_a_bad_fault_file_is_refused_naming_the_file_and_the_entry(tmp_path, content, message):
    bad = tmp_path / "list.json"
    bad.write_text(content)
    with pytest.raises(FaultSpecError, match=message):
        read_fault_spec(str(bad))


def test_a_spec_that_is_neither_a_set_nor_a_file_is_refused(tmp_path):
    with pytest.raises(FaultSpecError, match=r"--faults 'route': not one of none, routes, all and no such file"):
        read_fault_spec("route")


def test_the_demo_price_is_added_and_every_other_setting_kept(tmp_path):
    save_settings(tmp_path, base_url="http://127.0.0.1:9/v1", model="m", concurrency=3, budget_usd=2.0, api_key="sk-x")
    before = json.loads((tmp_path / "config.json").read_text())
    write_demo_price(tmp_path)
    after = json.loads((tmp_path / "config.json").read_text())
    assert after["llm"].pop("prices") == {REPLAY_MODEL: DEMO_PRICE.model_dump()}
    assert after == before
    s = load_settings(tmp_path, env={})
    assert s.price(REPLAY_MODEL) == DEMO_PRICE and s.api_key.get_secret_value() == "sk-x"
    assert s.price("gpt-4o-mini").input_per_mtok > 0                  # the list prices stay
    assert (tmp_path / "config.json").stat().st_mode & 0o777 == 0o600
