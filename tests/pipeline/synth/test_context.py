"""A path's context from the store: every step's skill parts, inputs/outputs/binaries, its
stored pre/post scenarios, and the bridge to the next step (no Docker, no LLM)."""
from __future__ import annotations

from pipeline.graph.sample_run import sample
from pipeline.synth.context import NO_BRIDGE_NEEDED, path_contexts
from workbench.store import graph as graph_store
from workbench.store.connection import Database


def _contexts(ws, n: int = 30, seed: int = 2):
    drawn = sample(ws, "inverse-frequency", n, seed, min_len=2, max_len=5)
    ids = graph_store.batch_path_ids(ws.db, drawn.batch_id)
    return ids, path_contexts(ws, ids)


def _scalar(db: Database, sql: str, params=()):
    with db.read() as con:
        return con.execute(sql, list(params)).fetchone()[0]


def test_every_step_has_its_scenarios_and_every_link_a_bridge(graph_workspace):
    ws = graph_workspace
    ids, contexts = _contexts(ws)
    assert list(contexts) == ids                       # every path, in the run's order
    verdicts = []
    for ctx in contexts.values():
        assert len(ctx.steps) >= 2 and ctx.steps[-1].bridge is None
        for i, sc in enumerate(ctx.steps):
            assert sc.body and sc.step.parts.body == sc.body          # SKILL.md body and parsed parts arrived
            assert sc.pre is not None and sc.post is not None, sc.step.skill_id
            stored = _scalar(ws.db, "SELECT goal FROM scenarios WHERE skill_id = ? AND role = 'pre'",
                             [sc.step.skill_id])
            assert sc.pre.goal == stored and sc.pre.canonical and sc.post.io_tool
            if i < len(ctx.steps) - 1:
                nxt = ctx.steps[i + 1]
                b = sc.bridge
                assert (b.from_skill, b.to_skill) == (sc.step.skill_id, nxt.step.skill_id)
                assert sc.step.dst_anchor == nxt.step.src_anchor              # the path is connected
                verdicts.append(b.verdict)
                if b.verdict == "unchecked":
                    assert b.reason == NO_BRIDGE_NEEDED   # sampled paths only cross verified bridges
                else:
                    assert b.verdict == "verified" and 0 < b.similarity <= 1 and b.reason
    # the demo graph's paths both stay in one cluster and cross bridges
    assert "verified" in verdicts and "unchecked" in verdicts


def test_inputs_outputs_and_bins_are_the_stored_skill_facts(graph_workspace):
    ws = graph_workspace
    _, contexts = _contexts(ws, n=10, seed=4)
    sc = next(iter(contexts.values())).steps[0]
    with ws.db.read() as con:
        bins, inputs, outputs = con.execute("SELECT bins, inputs, outputs FROM skills WHERE id = ?",
                                            [sc.step.skill_id]).fetchone()
    assert sc.bins == tuple(bins or ()) and sc.inputs == tuple(inputs or ()) and sc.outputs == tuple(outputs or ())
    assert sc.tools == sc.step.parts.tools


def test_a_skill_without_scenarios_or_bridge_rows_is_told_not_invented(graph_workspace):
    ws = graph_workspace
    ids, contexts = _contexts(ws, n=10, seed=4)
    ctx = next(c for c in contexts.values() if c.steps[0].bridge.verdict == "verified")
    first, second = ctx.steps[0].step.skill_id, ctx.steps[1].step.skill_id
    with ws.db.write() as con:
        con.execute("DELETE FROM scenarios WHERE skill_id = ? AND role = 'post'", [first])
        con.execute("DELETE FROM bridges")
    again = path_contexts(ws, [ctx.path_id])[ctx.path_id]
    assert again.steps[0].post is None and again.steps[0].pre is not None
    bridge = again.steps[0].bridge
    assert (bridge.from_skill, bridge.to_skill, bridge.verdict) == (first, second, "unchecked")
    assert bridge.reason != NO_BRIDGE_NEEDED and "no stored bridge" in bridge.reason
    assert path_contexts(ws, []) == {}
