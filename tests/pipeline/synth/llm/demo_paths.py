"""Demo paths whose offline task is the scripted LLM reply: chosen so that every step of it runs
a tool of its skill (so an LLM-built task made from those replies can be asked to reflect its skills;
the scripted instruction names the path's skills, pipeline.synth.llm.scripted)."""
from __future__ import annotations

from pipeline.synth.compose import synthesize_task
from pipeline.synth.context import path_contexts
from pipeline.synth.protocol import PathContext
from workbench.store import graph as graph_store
from workbench.workspace import Workspace


def tool_paths(ws: Workspace, n: int, *, steps: int = 2) -> dict[str, PathContext]:
    """The first `n` paths of one sample batch with `steps` steps (distinct skill chains) whose
    offline task, built as the scripted double builds it (no skill packages), uses a tool of every
    step's skill."""
    for batch in graph_store.sample_batches(ws.db)["batch_id"]:
        out = _tool_paths_of(ws, batch, n, steps)
        if len(out) == n:
            return out
    raise AssertionError(f"no sample batch of the demo graph has {n} such paths of {steps} steps")


def batch_of(path_id: str) -> str:
    return path_id.rsplit("-", 1)[0]    # path ids are <batch>-<i> (pipeline.graph.sample_run)


def _tool_paths_of(ws: Workspace, batch: str, n: int, steps: int) -> dict[str, PathContext]:
    out: dict[str, PathContext] = {}
    chains: set[tuple[str, ...]] = set()
    for pid, ctx in path_contexts(ws, graph_store.batch_path_ids(ws.db, batch)).items():
        chain = tuple(s.step.skill_id for s in ctx.steps)
        if len(ctx.steps) != steps or chain in chains:
            continue
        try:
            # as the scripted double builds it: recipes only (with packages a step could be an
            # exercise, which the double never writes, and read "tool" where the double's does not)
            task = synthesize_task(ctx.path_steps, 0, "base", path_id=pid, ship_skills=False)
        except Exception:
            continue
        if all(f.fidelity == "tool" for f in task.fidelity):
            out[pid] = ctx
            chains.add(chain)
        if len(out) == n:
            break
    return out
