"""The synthesis batch's pure worker: a path item in, a PathOutcome out, nothing written. It
runs after being pickled the way Ray ships it (cloudpickle) with the workspace gone, and it
reports a spent budget, a failing endpoint and a stop in its outcome instead of raising."""
from __future__ import annotations

import shutil
import threading

import cloudpickle
import pytest

from pipeline.graph.sample_run import sample
from pipeline.synth.context import path_contexts
from pipeline.synth.offline import OfflineSynthesizer
from pipeline.synth.protocol import PathContext
from pipeline.synth.worker import PathItem, WorkerContext, synthesize_path
from pipeline.verify.run import VerifyContext
from workbench.llm.budget import BudgetExceeded
from workbench.llm.client import LLMCallError
from workbench.sandbox.base_image import base_image_name
from workbench.store import graph as graph_store

SEED = 3


def _paths(ws, n: int) -> list[PathContext]:
    batch = sample(ws, "inverse-frequency", n, SEED, min_len=2, max_len=3)
    return list(path_contexts(ws, graph_store.batch_path_ids(ws.db, batch.batch_id)).values())


@pytest.mark.docker
def test_the_pickled_worker_makes_and_verifies_a_task_with_no_workspace_anywhere(graph_workspace, tmp_path,
                                                                                  monkeypatch, engine):
    ws = graph_workspace
    synth = OfflineSynthesizer(base_image_name())
    paths = _paths(ws, 2)
    items = [PathItem(p, SEED, synth.task_id(p, SEED)) for p in paths]
    ctx = WorkerContext(synth, base_image_name(), "synth-w", VerifyContext(engine=engine, stop=threading.Event()))
    shipped = cloudpickle.dumps((ctx, items))
    shutil.rmtree(ws.root)                          # no workspace, no DuckDB file: the worker needs neither
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("WORKBENCH_HOME", str(tmp_path / "nowhere"))
    there, shipped_items = cloudpickle.loads(shipped)
    assert there.sandbox.engine is None and there.sandbox.stop is not ctx.sandbox.stop   # made on the worker
    outcomes = [synthesize_path(it, there) for it in shipped_items]
    assert not ws.root.exists() and not (tmp_path / "nowhere").exists()
    assert list(here.iterdir()) == []              # nothing written where it ran either
    made = [o for o in outcomes if o.kind == "task"]
    assert made, [(o.kind, o.error) for o in outcomes]
    for o in made:
        assert o.record.task_id == o.task_id and o.record.bundle_dir == f"tasks/{o.task_id}"
        assert o.record.bundle_hash == o.bundle.content_hash() and "task.toml" in o.bundle.files
        names = [c.name for c in o.checks]
        assert names[:3] == ["build", "noop", "oracle"] and o.checks[0].passed
        assert o.timings["docker_s"] > 0 and o.timings["total_s"] >= o.timings["docker_s"]
    assert there.sandbox.engine is not None        # this process's node engine, made on first use


class Raises:
    provider = "llm"

    def __init__(self, exc: BaseException):
        self.exc = exc

    def task_id(self, path, seed):
        return "t" * 16

    def synthesize(self, path, seed, tools):
        raise self.exc


def _run(synth, stop: threading.Event | None = None):
    ctx = WorkerContext(synth, "img:1", "synth-w", VerifyContext(stop=stop or threading.Event()))
    return synthesize_path(PathItem(PathContext("p1", ()), 0, "t" * 16), ctx)


def test_budget_endpoint_and_bugs_come_back_in_the_outcome():
    spent = _run(Raises(BudgetExceeded("budget of $1 spent")))
    assert (spent.kind, spent.halt, spent.stop_all) == ("halt", "budget", False)
    down = _run(Raises(LLMCallError("connection refused", error_class="APIConnectionError", attempts=3)))
    assert down.kind == "halt" and down.stop_all and down.halt.startswith("the LLM endpoint failed (APIConnectionError")
    refused = _run(Raises(LLMCallError("bad schema", error_class="StructuredOutputError", attempts=2)))
    assert refused.kind == "failed" and refused.error == "synthesis failed: LLMCallError: bad schema"
    bug = _run(Raises(KeyError("x")))
    assert bug.kind == "failed" and bug.error == "synthesis failed: KeyError: 'x'"
    stop = threading.Event()
    stop.set()
    assert _run(Raises(KeyError("x")), stop).kind == "dropped"      # a stop: proves nothing, nothing is asked
