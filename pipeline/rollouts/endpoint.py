"""The LLM a batch's terminus-2 agents talk to: the workspace's endpoint, or an in-process
replay server playing helper B's scripted Terminus-2 model (a test double, said so wherever
it is used). One client per batch, its calls logged under batch_id = run_id."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import SecretStr

from pipeline.rollouts.selection import TaskTarget
from workbench.workspace import Workspace

NO_ENDPOINT = ("agent 'terminus-2' needs an LLM endpoint: set WORKBENCH_LLM_BASE_URL (an OpenAI-compatible URL) "
               "or configure one on the Settings page; or play the scripted test model with --replay oracle")
REPLAY_NOTE = ("the model is a TEST DOUBLE: an in-process replay server playing the scripted Terminus-2 model "
               "(behaviour {behaviour!r}), not an LLM")


def replay_behaviours() -> tuple[str, ...]:
    from pipeline.agents.terminus2 import scripted
    return tuple(getattr(scripted, "BEHAVIOURS", ("oracle", "malformed", "never_completes", "floods",
                                                    "early_complete")))


def check_endpoint(ws: Workspace, replay: str | None) -> None:
    """Refuse, with advice, a terminus-2 batch that has no model to talk to."""
    if replay is not None:
        if replay not in (known := replay_behaviours()):
            raise ValueError(f"--replay {replay!r}: choose one of {', '.join(known)}")
        return
    from workbench.llm.runtime import workspace_settings
    if not workspace_settings(ws).online:
        raise ValueError(NO_ENDPOINT)


@dataclass
class AgentEndpoint:
    """An open caller (pipeline.synth.llm.calls.LLMCaller), the model it asks for, and the replay
    server behind it when there is one; `close()` releases both."""
    caller: object
    model: str
    server: object | None = None
    note: str | None = None

    @property
    def cost_usd(self) -> float:
        return float(self.caller.client.budget.total.cost_usd)

    def close(self) -> None:
        try:
            self.caller.close()       # flushes the call log: rollout costs can be read from it now
        finally:
            if self.server is not None:
                self.server.stop()


def open_endpoint(ws: Workspace, *, run_id: str, concurrency: int, model: str | None, budget_usd: float | None,
                  replay: str | None = None, targets: Sequence[TaskTarget] = ()) -> AgentEndpoint:
    """`replay`: a behaviour of the scripted model, served over real HTTP to the real client for
    `targets` (it types each task's own solve.sh)."""
    from pipeline.synth.llm.calls import LLMCaller
    from workbench.llm.runtime import open_client, workspace_settings
    check_endpoint(ws, replay)
    settings = workspace_settings(ws)
    server, note = None, None
    if replay is not None:
        from pipeline.agents.terminus2.scripted import replay_model, scripted_terminus_rules, solutions_by_instruction
        from workbench.llm.replay_server import ReplayServer, Script
        solutions = solutions_by_instruction([t.bundle for t in targets])   # the model knows a task by its text
        server = ReplayServer(Script(rules=scripted_terminus_rules(solutions, behaviour=replay))).start()
        settings = settings.model_copy(update={"base_url": server.base_url, "api_key": SecretStr("replay"),
                                               "stored_key_endpoint": None})
        model, note = replay_model(replay), REPLAY_NOTE.format(behaviour=replay)
    model = model or settings.model
    # At least as many calls in flight as rollouts, so the client is never the bottleneck.
    settings = settings.model_copy(update={"model": model, "concurrency": max(settings.concurrency, concurrency)})
    try:
        caller = LLMCaller(open_client(ws, settings, budget_usd=budget_usd, batch_id=run_id))
    except BaseException:
        if server is not None:
            server.stop()
        raise
    return AgentEndpoint(caller=caller, model=model, server=server, note=note)
