"""`make_executor`: the one place a stage turns `--executor` / `--ray-address` into an Executor.

The local path never imports Ray (it is an optional extra); "ray" imports it only when asked.
"""
from __future__ import annotations

from workbench.executors.local import LocalExecutor
from workbench.executors.protocol import EXECUTORS, Executor

RAY_INSTALL_HINT = "pip install -e .[ray]"


def check_choice(kind: str, ray_address: str | None) -> None:
    """The rules `--executor` / `--ray-address` obey in every stage, checked before anything is recorded."""
    if kind not in EXECUTORS:
        raise ValueError(f"--executor {kind!r} is unknown: choose one of {', '.join(EXECUTORS)}")
    if kind != "ray" and ray_address:
        raise ValueError(f"--ray-address {ray_address!r} is only for --executor ray")


def make_executor(kind: str = "local", *, concurrency: int,
                  ray_address: str | None = None) -> Executor:
    """An executor of `kind` (one of EXECUTORS).

    local: threads, `concurrency` at a time. ray: Ray tasks on the cluster at `ray_address`
    (`auto`, `ray://host:port` or `host:port`; empty or None attaches the cluster this machine
    knows of, else starts a local one), `concurrency` in flight (0: as many as the cluster has
    `docker` slots). Raises ValueError saying what was wrong: an unknown kind, Ray not
    installed, no cluster answering at the address."""
    check_choice(kind, ray_address)
    if kind == "local":
        return LocalExecutor(concurrency)
    try:
        import ray  # noqa: F401  (only to tell a missing extra apart from other errors)
    except ImportError:
        raise ValueError(f"--executor ray needs Ray, which is not installed: {RAY_INSTALL_HINT}") from None
    from workbench.executors.ray_executor import RayExecutor
    return RayExecutor(ray_address or None, concurrency=concurrency or None)
