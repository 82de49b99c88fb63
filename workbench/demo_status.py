"""The demo build's status file: written by the background build (`workbench demo`), read by
the dashboard, so that a newcomer sees what is being built while it is built."""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATUS_FILE = "demo-build.json"
LOG_FILE = "demo-build.log"   # under the workspace's runs/

# The stages in the order the build runs them; `docker` only where the build sets Docker up.
STAGES = {
    "ingest": "Ingest the bundled corpus",
    "scenarios": "Infer scenarios (offline provider)",
    "graph": "Build the scenario graph (embeddings, dedup, bridges, map)",
    "sample": "Sample 200 inverse-frequency and 200 random-walk paths",
    "docker": "Set up Docker and the base image",
    "tasks": "Synthesize and verify a first batch of tasks in Docker",
    "llm_tasks": "Synthesize a small batch with the LLM synthesizer against a scripted replay server (no API key)",
    "rollouts": "Roll out oracle, nop and ablation (a verifier probe) on the accepted tasks, and terminus-2 "
                "against a scripted test model on a few",
    "evolution": "Evolve the tasks one round (SETA-Evol) on noisy-oracle rollouts (simulated, not a model)",
}


@dataclass
class StageProgress:
    key: str
    title: str
    state: str = "waiting"   # waiting | running | done | skipped | failed
    detail: str = ""
    done: int = 0
    total: int = 0


@dataclass
class DemoStatus:
    state: str                 # building | done | failed | stopped
    pid: int
    started: float
    updated: float
    stages: list[StageProgress] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)   # what the demo lacks, and how to get it
    error: str = ""
    log: str = ""

    @property
    def running(self) -> bool:
        """Building, and the process that builds is still alive (a killed build says so)."""
        from workbench.sandbox.engine import pid_alive
        return self.state == "building" and pid_alive(self.pid)

    @property
    def interrupted(self) -> bool:
        return self.state == "stopped" or (self.state == "building" and not self.running)

    @property
    def current(self) -> StageProgress | None:
        return next((s for s in self.stages if s.state == "running"), None)

    def stage(self, key: str) -> StageProgress:
        return next(s for s in self.stages if s.key == key)


def status_path(root: Path) -> Path:
    return Path(root) / STATUS_FILE


def new_status(stage_keys: list[str], log: Path) -> DemoStatus:
    now = time.time()
    return DemoStatus(state="building", pid=os.getpid(), started=now, updated=now, log=str(log),
                      stages=[StageProgress(k, STAGES[k]) for k in stage_keys])


def write_status(root: Path, status: DemoStatus) -> None:
    """Atomically (write then rename), so a reader never sees half a file."""
    status.updated = time.time()
    path = status_path(root)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(status), indent=1), encoding="utf-8")
    os.replace(tmp, path)


def read_status(root: Path) -> DemoStatus | None:
    """The last status the build wrote, or None where no demo build ever ran here (or the
    file is unreadable: the dashboard then simply shows the workspace as it is)."""
    try:
        raw = json.loads(status_path(root).read_text(encoding="utf-8"))
        raw["stages"] = [StageProgress(**s) for s in raw.get("stages", [])]
        return DemoStatus(**raw)
    except (OSError, ValueError, TypeError):
        return None
