"""What a rollout batch is made of and the rules its arguments obey, checked before anything is
recorded (the CLI, the page's launch and the evolve driver call the same checks)."""
from __future__ import annotations

from dataclasses import dataclass

from pipeline.agents.protocol import AGENTS
from workbench.executors.factory import check_choice


@dataclass(frozen=True)
class BatchSpec:
    """What a batch is: kept in the run's params, so a resume runs the very same items."""
    agent: str
    task_ids: tuple[str, ...]
    k: int
    model: str | None
    temperature: float
    max_turns: int | None
    replay: str | None
    keep_p: float | None = None     # noisy-oracle's p

    def params(self, **extra) -> dict:
        return {"task_ids": list(self.task_ids), "k": self.k, "model": self.model, "temperature": self.temperature,
                "max_turns": self.max_turns, "replay": self.replay, "keep_p": self.keep_p, **extra}


@dataclass(frozen=True)
class ExecutorChoice:
    """Where a batch's rollouts run: kept in the run's params too, so a resume runs them there
    again (unless told otherwise). It does not change the work: the same keys either way."""
    kind: str = "local"             # one of EXECUTORS
    ray_address: str | None = None  # ray: `auto`, `ray://host:port`, `host:port`; None starts/attaches a local one


TERMINUS_ON_RAY = ("--agent terminus-2 cannot run with --executor ray yet: its LLM client, budget and call log "
                   "live in the driver; run it with --executor local (scripted agents run on Ray)")


def check_executor(agent: str, executor: str, ray_address: str | None) -> None:
    check_choice(executor, ray_address)
    if executor == "ray" and agent == "terminus-2":
        raise ValueError(TERMINUS_ON_RAY)


def check_args(*, agent: str, k: int, concurrency: int | None, temperature: float, budget_usd: float | None,
               max_turns: int | None, replay: str | None, model: str | None, keep_p: float | None = None,
               executor: str = "local", ray_address: str | None = None) -> None:
    """Bad arguments are refused, saying which and why, before anything is recorded."""
    if agent not in AGENTS:
        raise ValueError(f"--agent {agent!r}: choose one of {', '.join(AGENTS)}")
    if k < 1:
        raise ValueError(f"-k must be at least 1, got {k}")
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1, got {concurrency}")
    if not temperature >= 0:
        raise ValueError(f"--temperature must be 0 or more, got {temperature}")
    if budget_usd is not None and not budget_usd >= 0:
        raise ValueError(f"--budget-usd must be 0 or more, got {budget_usd}")
    if max_turns is not None and max_turns < 1:
        raise ValueError(f"--max-turns must be at least 1, got {max_turns}")
    if agent != "terminus-2" and (replay is not None or model is not None):
        raise ValueError(f"agent {agent!r} is scripted: --model and --replay are for terminus-2 only")
    if agent != "terminus-2" and (temperature or max_turns is not None):   # else silently ignored
        raise ValueError(f"agent {agent!r} is scripted: --temperature and --max-turns are for terminus-2 only")
    if replay is not None and model is not None:
        raise ValueError("--replay plays the scripted test model; --model cannot be given with it")
    if keep_p is not None and agent != "noisy-oracle":
        raise ValueError(f"--p is noisy-oracle's probability of keeping a solution step; agent {agent!r} takes none")
    if keep_p is not None and not 0.0 <= keep_p <= 1.0:
        raise ValueError(f"--p must be between 0 and 1, got {keep_p}")
    check_executor(agent, executor, ray_address)
