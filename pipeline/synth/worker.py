"""The synthesis batch's pure worker: one path item → synthesize + verify → a PathOutcome in memory.

The executor contract (workbench/executors/protocol.py): the worker never opens the workspace
or its DuckDB file; it hands back the task's bundle, its record, checks, repair attempts and
timings, and only the driver (pipeline/synth/commit.py) writes them. Everything it needs
travels in the item (the path's full context) and the context (the synthesizer, the base
image, the benchmark index, the network opt-in), so on Ray it runs on any node with Docker:
the context drops its Engine and stop Event when pickled and makes its own on the worker.

A worker reports what would have made the old batch halt (a spent budget, a failing LLM
endpoint) in the outcome instead of raising, so the driver sees the same thing from a thread
and from a Ray task (no exception has to survive pickling).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from pipeline.synth.protocol import PathContext, Synthesizer, SynthTools
from pipeline.verify.run import VerifyContext
from workbench.llm.budget import BudgetExceeded
from workbench.llm.client import LLMCallError
from workbench.models import CheckResult, TaskRecord
from workbench.sandbox.bundle import TaskBundle


@dataclass(frozen=True)
class PathItem:
    """One unit of synthesis work: a path with its context, the batch's seed and the id its
    synthesizer announced for it (the content key: paths of the same steps are one task)."""
    path: PathContext
    seed: int
    task_id: str

    @property
    def key(self) -> str:
        return self.task_id

    @property
    def path_id(self) -> str:
        return self.path.path_id


Kind = Literal["task", "failed", "dropped", "halt"]


@dataclass
class PathOutcome:
    """What one path gave, held in memory until the driver commits it.
    kind "task": `bundle` + `record` (+ `checks`; None when verification crashed, `error` says how);
    "failed": no task (`error` says why; `attempts` what was tried); "dropped": cut short by a
    stop, proves nothing (resume does it again); "halt": the batch must take no more paths
    (`halt` says why; `stop_all`: the paths in flight stop too)."""
    path_id: str
    task_id: str
    kind: Kind
    error: str | None = None
    halt: str | None = None
    stop_all: bool = False
    bundle: TaskBundle | None = None
    record: TaskRecord | None = None
    near_dup_key: str | None = None
    skill_fidelity: list[dict] = field(default_factory=list)
    attempts: list[dict] = field(default_factory=list)
    checks: list[CheckResult] | None = None
    verify_error: str | None = None      # the batch's own verification crashed (the task is kept unverified)
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class WorkerContext:
    """What every path of a batch shares: the synthesizer (it must pickle for Ray: the offline
    one does), the base image, the run id, and `sandbox` (engine, stop, benchmark, network
    opt-in: pickled, it makes the worker's own engine and stop)."""
    synthesizer: Synthesizer
    base_image: str
    run_id: str
    sandbox: VerifyContext = field(default_factory=VerifyContext)

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_tools"}

    def tools(self) -> SynthTools:
        if self.__dict__.get("_tools") is None:
            sb = self.sandbox
            self.__dict__["_tools"] = SynthTools(engine=sb.the_engine(), base_image=self.base_image, benchmark=sb.benchmark,
                                                 allow_network=sb.allow_network, stop=sb.stop, run_id=self.run_id,
                                                 red_team=sb.red_team)
        return self.__dict__["_tools"]


def synthesize_path(item: PathItem, ctx: WorkerContext) -> PathOutcome:
    """Synthesize the item's task and, when the synthesizer did not, verify it. Never raises for
    what a path can go wrong with; the driver commits what comes back."""
    t0 = time.monotonic()
    out = _synthesize(item, ctx)
    out.timings["total_s"] = time.monotonic() - t0
    return out


def _synthesize(item: PathItem, ctx: WorkerContext) -> PathOutcome:
    path_id, task_id = item.path_id, item.task_id

    def outcome(kind: Kind, **kw) -> PathOutcome:
        return PathOutcome(path_id, task_id, kind, **kw)
    stop = ctx.sandbox.stop
    if stop.is_set():
        return outcome("dropped")
    tools = ctx.tools()
    try:
        made = ctx.synthesizer.synthesize(item.path, item.seed, tools)
    except BudgetExceeded:          # this path stays unfinished: resume does it again (cached replies)
        return outcome("halt", halt="budget")
    except LLMCallError as exc:
        if not exc.endpoint_fault:
            return outcome("failed", error=f"synthesis failed: {exc.__class__.__name__}: {exc}")
        return outcome("halt", halt=f"the LLM endpoint failed ({exc.error_class}: {str(exc)[:300]})", stop_all=True)
    except Exception as exc:  # a recipe or synthesizer bug must not sink the batch; it is recorded
        if stop.is_set():
            return outcome("dropped")
        return outcome("failed", error=f"synthesis failed: {exc.__class__.__name__}: {exc}")
    timings = {k: float(v) for k, v in made.timings.items() if k != "total_s"}   # total_s: the worker's own
    attempts = [a.model_dump() if hasattr(a, "model_dump") else a for a in made.attempts]   # the store checks them
    if stop.is_set() and (made.task is None or made.checks is not None):
        return outcome("dropped")   # made while the stop killed its containers: proves nothing
    task = made.task
    if task is None:   # e.g. an environment that never built: what was tried is kept all the same
        return outcome("failed", error=made.error or "synthesis gave no task and no reason",
                       attempts=attempts, timings=timings)
    if task.task_id != task_id:   # resume skips by the announced id: a different one would redo it forever
        return outcome("failed", timings=timings,
                       error=f"synthesizer {ctx.synthesizer.provider!r} announced task id {task_id} "
                             f"but made {task.task_id}")
    steps = item.path.path_steps
    bundle: TaskBundle = task.bundle
    rel = f"tasks/{task_id}"
    record = TaskRecord(
        task_id=task_id, name=task.name, path_id=path_id, category=task.category, difficulty=task.difficulty,
        n_steps=len(task.recipes) or len(steps), recipes=task.recipes, skill_ids=[s.skill_id for s in steps],
        scenario_ids=list(dict.fromkeys(a for s in steps for a in (s.src_anchor, s.dst_anchor))),
        provider=ctx.synthesizer.provider, bundle_dir=rel, bundle_hash=bundle.content_hash())
    out = outcome("task", error=made.error, bundle=bundle, record=record, near_dup_key=task.near_dup_key,
                  skill_fidelity=[f.as_dict() for f in task.fidelity], attempts=attempts, checks=made.checks,
                  timings=timings)
    if out.checks is None:
        return _verify(out, ctx.sandbox)
    return out


def _verify(out: PathOutcome, sandbox: VerifyContext) -> PathOutcome:
    """The batch's own verification of a bundle its synthesizer did not verify."""
    if sandbox.stop.is_set():
        out.kind = "dropped"
        return out
    t0 = time.monotonic()
    try:
        checks = sandbox.verify(out.bundle)
    except Exception as exc:  # an engine hiccup on one task must not sink the batch
        if sandbox.stop.is_set():
            out.kind = "dropped"
        else:
            out.verify_error = f"verification crashed: {exc.__class__.__name__}: {exc}"
        return out
    finally:
        out.timings["docker_s"] = out.timings.get("docker_s", 0.0) + time.monotonic() - t0
    if sandbox.stop.is_set():
        out.kind = "dropped"    # checks cut short by the stop prove nothing
        return out
    out.checks = checks
    return out
