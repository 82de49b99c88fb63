"""What a task may ask of the sandbox: less than the workbench's limits, never more.

A bundle's `task.toml` is hostile input. Its timeouts, memory, CPUs and disk are capped at
the ceilings below, and network access needs the user's own opt-in (`--allow-network` or
the workspace setting, see `workbench.config.workspace_allows_network`), not the bundle's
word. Every cap and refusal is returned as a note, so the verdict can say so.
"""
from __future__ import annotations

from dataclasses import dataclass

from workbench.sandbox.task_toml import TOML_KEYS, TaskToml

# The longest a container may outlive its last allowed command (copying files in and out).
LIFETIME_MARGIN_S = 120.0


@dataclass(frozen=True)
class Ceilings:
    agent_timeout_sec: float = 1800.0     # the synthesizer's longest task: 300 s + 300 s per step, 5 steps
    verifier_timeout_sec: float = 600.0
    build_timeout_sec: float = 900.0
    memory_mb: int = 4096
    cpus: float = 2.0
    storage_mb: int = 4096

    @property
    def longest_lifetime_s(self) -> float:
        """The longest any check container may live: the solution, then the tests."""
        return self.agent_timeout_sec + self.verifier_timeout_sec + LIFETIME_MARGIN_S


CEILINGS = Ceilings()
_UNITS = {"memory_mb": " MB", "storage_mb": " MB", "cpus": " CPUs"}


@dataclass(frozen=True)
class Grant:
    task: TaskToml               # the request with every value capped; network only if granted
    notes: tuple[str, ...]       # what was capped or refused, in words for the verdict

    @property
    def summary(self) -> str:
        return "; ".join(self.notes)


def _fmt(field: str, v: float) -> str:
    unit = _UNITS.get(field, " s")
    return f"{v}{unit}" if isinstance(v, int) else f"{v:g}{unit}"


def grant(cfg: TaskToml, allow_network: bool = False, ceilings: Ceilings = CEILINGS) -> Grant:
    """`cfg` capped at `ceilings`; network kept only when the user opted in."""
    changes: dict[str, object] = {}
    notes: list[str] = []
    for field in ("agent_timeout_sec", "verifier_timeout_sec", "build_timeout_sec", "memory_mb", "cpus", "storage_mb"):
        asked, ceiling = getattr(cfg, field), getattr(ceilings, field)
        if asked > ceiling:
            changes[field] = ceiling
            notes.append(f"{TOML_KEYS[field]} = {_fmt(field, asked)} capped at {_fmt(field, ceiling)}")
    if cfg.allow_internet and not allow_network:
        changes["allow_internet"] = False
        notes.append("network access refused: the task asks for it (allow_internet = true) but the user did not "
                     "opt in (`--allow-network` or the workspace setting sandbox.allow_network)")
    capped = cfg.model_copy(update=changes)
    capped._network_granted = capped.allow_internet and allow_network
    return Grant(capped, tuple(notes))
