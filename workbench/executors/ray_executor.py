"""RayExecutor: the executor contract (protocol.py) with every item a Ray task on a cluster.

The driver (the caller's process) submits lazily — at most `concurrency` items in flight,
by default the cluster's total `docker` resource — and, as results arrive (`ray.wait`),
calls `commit` / `on_error` in the caller's thread, exactly as LocalExecutor does. `process`
is put into the object store once; each item runs as a task requesting the `docker`
resource, so container work lands only on nodes started with it. Outcomes travel back
through the object store; workers never write the workspace.

Failures: an exception raised by `process` is the item's error (never retried: running it
again would fail the same way) and goes to `on_error` as the original exception. A worker
or node lost mid-item is a system failure: Ray runs the item again elsewhere up to
`max_retries` times; if it is still lost, `on_error` gets a RayItemLost saying so. Each key
is committed at most once, so a retried item is never committed twice.

What a real node needs (one machine works as is, the same venv serving head and nodes):
the project's venv at the same Python version (its third-party packages; our own packages
are shipped by the runtime env, see ray_connect), a Docker engine the node's user may use,
and `ray start --address HEAD:PORT --resources '{"docker": N}'` with N = the containers it
may run at once. The base image is loaded onto its engine from the driver's copy (ray_nodes).
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

from workbench.executors.protocol import ExecutorReport, pending, record_failure, was_stopped
from workbench.executors.ray_connect import connect
from workbench.executors.ray_nodes import (DOCKER_RESOURCE, ImageUnavailable, NeedsImage, NodeImage, ensure_here,
                                           ensure_on_nodes, ship)

log = logging.getLogger("workbench.executors.ray")

DEFAULT_RESOURCES = {DOCKER_RESOURCE: 1}
MAX_SHIP_RETRIES = 2      # NeedsImage answers per item before it counts as failed
WAIT_S = 2.0              # how often a quiet batch looks whether any node can still run its items


class RayItemLost(RuntimeError):
    """Ray could not finish an item: its worker or node was lost on every try."""


def _run_item(process: Callable[[Any], Any], item: Any, need: NodeImage | None) -> Any:
    """The Ray task: the node's base image first (once per worker process), then `process`."""
    if need is not None:
        status = ensure_here(need)
        if isinstance(status, NeedsImage):
            return status
    return process(item)


def _base_image_default() -> str:
    from workbench.sandbox.base_image import base_image_name
    return base_image_name()


class RayExecutor:
    def __init__(self, address: str | None = None, *, concurrency: int | None = None,
                 resources: Mapping[str, float] | None = None, max_retries: int = 3,
                 base_image: str | None | bool = True, ship_code: bool = True, no_node_grace_s: float = 120.0):
        """`address`: see ray_connect.connect. `resources`: what each item asks of its node
        ({"docker": 1} unless given; {} for items that run no container). `base_image`: the
        image every docker node must have (True: the configured base, None/False: none).
        `no_node_grace_s`: how long a batch waits while no alive node offers the items'
        resource (Ray would keep them pending for ever) before failing what is left.
        Raises ValueError (RayUnreachable) when no cluster answers at `address`."""
        if concurrency is not None and concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self.concurrency = concurrency
        self.resources = dict(DEFAULT_RESOURCES if resources is None else resources)
        self.max_retries = max_retries
        self.no_node_grace_s = no_node_grace_s
        self.base_image = _base_image_default() if base_image is True else (base_image or None)
        self.address = connect(address, local_docker=concurrency or 1, ship_code=ship_code)

    # ------------------------------------------------------------ sizing
    def slots(self) -> int:
        """Items in flight: `concurrency`, else what the cluster offers of the items' resource."""
        if self.concurrency:
            return self.concurrency
        import ray
        total = ray.cluster_resources()
        if self.resources:
            name, each = next(iter(self.resources.items()))
            slots = int(total.get(name, 0) // each) if each else 0
            if slots < 1:
                raise ValueError(f"no node of the Ray cluster at {self.address} offers the {name!r} resource: "
                                 f"start nodes with `ray start ... --resources '{{\"{name}\": N}}'`")
            return slots
        return max(1, int(total.get("CPU", 1)))

    # ------------------------------------------------------------ the batch
    def run(self, items: Sequence[Any], process: Callable[[Any], Any], *,
            finished: Iterable[str] = (),
            commit: Callable[[Any, Any], None],
            on_error: Callable[[Any, BaseException], None] | None = None,
            stop: threading.Event | None = None) -> ExecutorReport:
        import ray
        todo, report = pending(items, finished)
        stop = stop or threading.Event()
        if not todo:
            return report
        limit = self.slots()
        need = None
        if self.base_image and DOCKER_RESOURCE in self.resources:
            need = NodeImage(self.base_image)
            report.nodes = ensure_on_nodes(need)
        # Container work is bounded by the docker resource, not CPUs (a worker mostly waits on
        # its engine); items asking for no resource take a CPU each.
        task = ray.remote(_run_item).options(
            num_cpus=0 if self.resources else 1, resources=self.resources or None, max_retries=self.max_retries, retry_exceptions=False)
        process_ref = ray.put(process)
        queue = iter(todo)
        running: dict[Any, Any] = {}      # ObjectRef -> item
        ships: dict[str, int] = {}        # key -> NeedsImage answers so far
        committed: set[str] = set()

        def submit(item) -> None:
            running[task.remote(process_ref, item, need)] = item

        def top_up() -> None:
            # Submit lazily, so a stop leaves the rest unstarted rather than queued on the cluster.
            while len(running) < limit and not stop.is_set():
                item = next(queue, None)
                if item is None:
                    return
                submit(item)

        def fail(item, exc: BaseException) -> None:
            record_failure(report, item, exc, on_error)

        try:
            top_up()
            unplaceable_since = None
            while running:
                ready, _ = ray.wait(list(running), num_returns=1, timeout=WAIT_S)
                if not ready:
                    if self._offered():
                        unplaceable_since = None
                    elif unplaceable_since is None:
                        unplaceable_since = time.monotonic()
                    elif time.monotonic() - unplaceable_since > self.no_node_grace_s:
                        self._give_up(running, () if stop.is_set() else queue, fail)
                    continue
                for ref in ready:
                    item = running.pop(ref)
                    try:
                        outcome = ray.get(ref)
                    except Exception as exc:     # noqa: BLE001 — sorted into the item's error below
                        fail(item, self._item_error(item, exc))
                        continue
                    if isinstance(outcome, NeedsImage):
                        ships[item.key] = ships.get(item.key, 0) + 1
                        if ships[item.key] > MAX_SHIP_RETRIES:
                            fail(item, RayItemLost(f"node {outcome.node_id[:12]} still lacks {outcome.image} after it was shipped"))
                            continue
                        try:
                            ship(need)
                        except ImageUnavailable as exc:
                            fail(item, exc)
                            continue
                        report.nodes.setdefault(outcome.node_id, "shipped on its first item")
                        submit(item)
                        continue
                    if item.key in committed:    # the same work twice in `items`: commit it once
                        report.skipped += 1
                        continue
                    committed.add(item.key)
                    commit(item, outcome)
                    report.done += 1
                top_up()
        except BaseException:
            for ref in running:              # the caller is going away: do not leave its work running
                ray.cancel(ref)
            raise
        report.stopped = was_stopped(report, stop)
        return report

    def _offered(self) -> bool:
        """Some alive node offers what the items ask for (anything at all when they ask nothing)."""
        import ray
        wanted = [name for name, amount in self.resources.items() if amount > 0]
        return any(n.get("Alive") and all(n.get("Resources", {}).get(w, 0) > 0 for w in wanted) for n in ray.nodes())

    def _give_up(self, running: dict, queue, fail: Callable[[Any, BaseException], None]) -> None:
        """No node left to run on: every item still running or in `queue` fails, saying why."""
        import ray
        wanted = ", ".join(repr(k) for k in self.resources) or "CPU"
        why = (f"no alive node of the Ray cluster at {self.address} has offered {wanted} for "
               f"{self.no_node_grace_s:g} s; the item was not run")
        for ref, item in list(running.items()):
            ray.cancel(ref, force=True)
            fail(item, RayItemLost(f"Ray lost item {item.key}: {why}"))
        running.clear()
        for item in queue:
            fail(item, RayItemLost(f"Ray lost item {item.key}: {why}"))

    def _item_error(self, item, exc: BaseException) -> BaseException:
        """The exception `on_error` gets: `process`'s own, or RayItemLost for Ray's failures."""
        from ray.exceptions import RayTaskError
        if isinstance(exc, RayTaskError):
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BaseException):
                return cause
            return RuntimeError(str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__)
        text = str(exc).strip().splitlines()
        first = text[0].split(". ")[0].rstrip(".") if text else "no detail"     # Ray's advice follows; the logs have it
        return RayItemLost(f"Ray lost item {item.key} after {self.max_retries} retr{'y' if self.max_retries == 1 else 'ies'}: "
                           f"{type(exc).__name__}: {first}")
