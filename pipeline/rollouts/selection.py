"""Which tasks a batch runs on, and its work items: tasks × k samples of one agent config."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.rollouts.models import RolloutItem
from pipeline.verify.run import image_for
from workbench.sandbox.bundle import BundleError, TaskBundle, read_bundle
from workbench.store import tasks as task_store
from workbench.workspace import Workspace


class SelectionError(ValueError):
    """The tasks asked for cannot be run (unknown id, no bundle on disk, none accepted)."""


@dataclass(frozen=True)
class TaskTarget:
    """A task as a batch runs it: its bundle as it is on disk now (the content key follows the
    content, so an edited task gets fresh rollouts) and its content-hash named image."""
    task_id: str
    bundle_dir: str
    bundle: TaskBundle
    bundle_hash: str
    image: str


def select_tasks(ws: Workspace, task_ids: Sequence[str] | None) -> list[TaskTarget]:
    """`task_ids` None: the accepted set (withdrawn tasks left out, as the store defines it)."""
    if task_ids is None:
        rows = task_store.accepted_tasks(ws.db)
        if rows.empty:
            raise SelectionError("no accepted tasks in this workspace: make some with `workbench synth`, "
                                 "or name tasks with --tasks")
        wanted = list(rows.task_id)
    else:
        wanted = list(dict.fromkeys(task_ids))
        if not wanted:
            raise SelectionError("no tasks given: name at least one task id, or use --accepted")
    frame = task_store.tasks_frame(ws.db)
    known = {r.task_id: r.bundle_dir for r in frame.itertuples()}
    if unknown := [t for t in wanted if t not in known]:
        raise SelectionError(f"unknown task id(s): {', '.join(unknown)} (`workbench status` or the Tasks page "
                             "lists the workspace's tasks)")
    targets = []
    for task_id in wanted:
        try:
            bundle = read_bundle(ws.root / known[task_id])
        except BundleError as exc:
            raise SelectionError(f"task {task_id}: its bundle at {known[task_id]} cannot be read: {exc}") from None
        targets.append(TaskTarget(task_id, known[task_id], bundle, bundle.content_hash(), image_for(bundle)))
    return targets


def make_items(targets: Sequence[TaskTarget], *, agent: str, agent_key: str, model: str | None, k: int,
               temperature: float, carry_bundles: bool = False) -> list[RolloutItem]:
    """k samples per task, in task order; the sample number is also the ablation's seed.
    `carry_bundles`: each item carries its task's files (workers with no shared disk, as on Ray);
    else the worker reads them from the workspace."""
    return [RolloutItem(task_id=t.task_id, bundle_dir=t.bundle_dir, bundle_hash=t.bundle_hash, image=t.image,
                        agent=agent, agent_key=agent_key, model=model, sample=s, temperature=temperature,
                        bundle=t.bundle if carry_bundles else None)
            for t in targets for s in range(k)]
