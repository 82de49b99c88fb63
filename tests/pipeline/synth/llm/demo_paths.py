"""Demo paths whose offline task is the scripted LLM reply: chosen so that every step of it runs
a tool of its skill (so an LLM-built task made from those replies can be asked to reflect its skills)."""
from __future__ import annotations

from pipeline.synth.compose import synthesize_task
from pipeline.synth.context import path_contexts
from pipeline.synth.protocol import PathContext
from workbench.store import graph as graph_store
from workbench.workspace import Workspace


def tool_paths(ws: Workspace, n: int, *, steps: int = 2) -> dict[str, PathContext]:
    """The first `n` sampled paths of `steps` steps (distinct skill chains) whose offline task
    uses a tool of every step's skill and names its skills."""
    out: dict[str, PathContext] = {}
    chains: set[tuple[str, ...]] = set()
    for batch in graph_store.sample_batches(ws.db)["batch_id"]:
        contexts = path_contexts(ws, graph_store.batch_path_ids(ws.db, batch))
        for pid, ctx in contexts.items():
            chain = tuple(s.step.skill_id for s in ctx.steps)
            if len(ctx.steps) != steps or chain in chains:
                continue
            try:
                task = synthesize_task(ctx.path_steps, 0, "base", path_id=pid)
            except Exception:
                continue
            if all(f.fidelity == "tool" for f in task.fidelity) and "- **" in task.bundle.text("instruction.md"):
                out[pid] = ctx
                chains.add(chain)
            if len(out) == n:
                return out
    raise AssertionError(f"the demo graph has only {len(out)} such paths of {steps} steps, {n} wanted")
