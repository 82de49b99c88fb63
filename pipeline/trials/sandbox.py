"""The container a trial runs in: the task's image under its granted limits, with the
verifier's read-only toolchain mounted (and checked to be) before any agent runs."""
from __future__ import annotations

from contextlib import contextmanager

from workbench.sandbox import toolchain
from workbench.sandbox.ceilings import LIFETIME_MARGIN_S, grant
from workbench.sandbox.engine import Engine, Limits
from workbench.sandbox.task_toml import TaskToml

FORK_HINT = "process limit reached: something forks without end"
TOOLCHAIN_UNUSABLE = "the verifier's own toolchain could not be used"


def limits_for(cfg: TaskToml, timeout_scale: float = 1.0) -> Limits:
    """The container limits a task gets: its request capped at the ceilings (`grant`), with a
    floor so a tiny request cannot starve the toolchain; the network only where `cfg` came
    out of a grant the user opted in to. The container may live as long as its agent and
    tests may run, and not longer."""
    capped = grant(cfg, allow_network=cfg.network_granted).task
    lifetime = (capped.agent_timeout_sec + capped.verifier_timeout_sec) * max(1.0, timeout_scale) + LIFETIME_MARGIN_S
    return Limits(memory_mb=max(capped.memory_mb, 256), cpus=max(capped.cpus, 0.25), disk_mb=capped.storage_mb,
                  network=capped.network_granted, lifetime_s=lifetime)


@contextmanager
def sandbox(engine: Engine, image: str, limits: Limits, purpose: str):
    """A trial container with the verifier's read-only toolchain mounted (and checked to be);
    removed on the way out whatever happens. Raises ToolchainError when the toolchain cannot
    be made or the image interferes with its mount."""
    tc = toolchain.ensure(engine)
    with engine.container(image, limits, purpose=purpose, mounts=[tc.mount()]) as box:
        toolchain.check_mounted(engine, box.container.id, tc.volume)
        yield box


def is_running(box) -> bool:
    """Whether the container still runs (asked of the daemon): one stopped at a limit is gone."""
    try:
        return bool(box.engine.client.api.inspect_container(box.container.id)["State"].get("Running"))
    except Exception:
        return False
