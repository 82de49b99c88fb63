"""The LLM operator behind the evolve driver: an LLM-built task synthesized and stored by run_synth
(the LLM synthesizer against the scripted model), then two rounds of run_evolve with oracle
rollouts (r = 1: harder, then harder again on the variant) through LlmOperator; real client over
HTTP, real Docker, a real DuckDB workspace."""
from __future__ import annotations

import os
import shutil

import pytest

from pipeline.evolve.llm_operator import EVOLVE, LlmOperator
from pipeline.evolve.llm_scripted import ScriptedEvolution
from pipeline.evolve.run import run_evolve
from pipeline.synth.batch import run_synth
from pipeline.synth.llm.calls import LLMCaller
from pipeline.synth.llm.scripted import ScriptedSynthesis
from pipeline.synth.llm.synthesizer import LLMSynthesizer
from tests.pipeline.synth.llm.demo_paths import batch_of, tool_paths
from tests.workbench.llm.conftest import make_settings
from workbench.llm.call_log import CallLog
from workbench.llm.client import LLMClient
from workbench.llm.replay_server import ReplayServer
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.bundle import read_bundle
from workbench.store import lineage as lineage_store
from workbench.store import tasks as task_store
from workbench.workspace import Workspace

pytestmark = pytest.mark.docker


def test_two_rounds_of_evolution_make_verified_llm_variants_with_lineage(graph_workspace_template, tmp_path):
    from workbench.sandbox.engine import Engine
    root = tmp_path / "ws"
    shutil.copytree(graph_workspace_template, root)
    ws = Workspace.open(root)
    [pid] = tool_paths(ws, 1)
    srv = ReplayServer().start()
    srv.add_rule(ScriptedEvolution(ws, base_image=base_image_name()).rule())
    srv.add_rule(ScriptedSynthesis(ws, base_image=base_image_name()).rule())
    caller = LLMCaller(LLMClient(make_settings(srv), log=CallLog(ws.db)))
    engine = Engine()
    try:
        task_store.create_run(ws.db, "llm-1", "random-walk", 1, 0, "llm", 1, os.getpid())
        task_store.attach_paths(ws.db, "llm-1", batch_of(pid), [pid])
        synth = run_synth(ws, run_id="llm-1", concurrency=1, engine=engine,
                          synthesizer=LLMSynthesizer(caller, model="test-model", solve_timeout_s=30))
        assert synth.accepted == 1, synth
        [parent] = task_store.tasks_frame(ws.db)["task_id"]
        op = LlmOperator(caller, engine=engine, base_image=base_image_name(), ws=ws, solve_timeout_s=30)
        report = run_evolve(ws, task_ids=[parent], rounds=2, agent="oracle", k=1, concurrency=1, engine=engine,
                            operators={"llm": op})
    finally:
        caller.close()
        srv.stop()
    d1, d1d1 = f"{parent}__d1", f"{parent}__d1__d1"
    rows = lineage_store.lineage_frame(ws.db, report.run_id).set_index("task_id")
    assert list(rows.index) == [d1, d1d1]
    assert list(rows["status"]) == ["made", "made"] and list(rows["verdict"]) == ["accepted", "accepted"]
    assert list(rows["provider"]) == ["llm", "llm"] and list(rows["round"]) == [1, 2]
    assert rows.at[d1d1, "parent_id"] == d1 and all(rows["change"].str.len() > 0)
    tasks = task_store.tasks_frame(ws.db).set_index("task_id")
    assert [int(tasks.at[t, "n_steps"]) for t in (parent, d1, d1d1)] == [2, 3, 4]
    assert "SIZES.tsv" in read_bundle(ws.root / tasks.at[d1d1, "bundle_dir"]).text("instruction.md")
    with ws.db.read() as con:       # each variant's LLM calls are its own
        stages = dict(con.execute("SELECT item, count(*) FROM llm_calls WHERE stage = ? GROUP BY item",
                                  [EVOLVE]).fetchall())
    assert stages == {d1: 1, d1d1: 1}
