"""The terminus-2 agent (DESIGN §9 "Terminus-2 in brief"): an LLM driving a tmux terminal in
the trial's container with Terminus-2's JSON protocol. The loop is episode.py; this module
opens the terminal, renders the first prompt, asks the model through the batch's LLMCaller
(stage agent_terminus2, item = the trial id) and hands the trial an AgentResult with the ATIF
trajectory and the asciinema recording.
"""
from __future__ import annotations

import time
from dataclasses import asdict

from pipeline.agents.protocol import AGENT_LABELS, AgentContext, AgentResult
from pipeline.agents.terminus2 import messages as msg
from pipeline.agents.terminus2.episode import DEFAULT_MAX_TURNS, Episode, look, run_episode
from pipeline.trajectories.atif import TrajectoryBuilder, TrajectoryError
from workbench import double_rule
from workbench.llm.caller import LLMCaller
from workbench.llm.client import LLMResult
from workbench.sandbox.terminal import SessionStopped, Terminal

AGENT_VERSION = "1"


class Terminus2Agent:
    name = "terminus-2"

    def __init__(self, *, caller: LLMCaller, model: str | None = None, temperature: float = 0.0,
                 max_turns: int | None = None):
        configured = caller.client.settings.model
        if model is not None and model != configured:
            # The client sends and prices its own model; two names would make the records lie.
            raise ValueError(f"agent 'terminus-2': model {model!r} but the LLM client is set up for "
                             f"{configured!r}; choose the model in the LLM settings")
        if temperature < 0:
            raise ValueError(f"agent 'terminus-2': temperature must be >= 0, got {temperature}")
        if max_turns is not None and max_turns < 1:
            raise ValueError(f"agent 'terminus-2': max_turns must be >= 1, got {max_turns}")
        self.caller = caller
        self.model = configured
        self.temperature = float(temperature)
        self.max_turns = max_turns or DEFAULT_MAX_TURNS

    @property
    def label(self) -> str:
        return (f"{double_rule.agent_config_label(self.name, AGENT_LABELS[self.name], self.model)}"
                f" · {double_rule.model_label(self.model)}")

    def config_key(self) -> str:
        tpl = self.caller.template(msg.STAGE)
        return (f"{self.name}@{AGENT_VERSION}:{self.model}:t={self.temperature:g}:turns={self.max_turns}"
                f":prompt={tpl.version}")

    def _ask(self, trial_id: str, version: str):
        params = {"temperature": self.temperature}

        def ask(messages: list[dict]) -> tuple[LLMResult, float]:
            timer: dict = {}
            res = self.caller.ask(msg.STAGE, trial_id, list(messages), None, template_version=version,
                                  timer=timer, params=params)
            return res, timer.get("llm_s", 0.0)
        return ask

    def run(self, ctx: AgentContext) -> AgentResult:
        t0 = time.monotonic()
        tpl = self.caller.template(msg.STAGE)
        builder = TrajectoryBuilder(ctx.trial_id, self.name, AGENT_VERSION, self.model,
                                    extra={"task_id": ctx.task_id, "temperature": self.temperature})
        terminal, recording = None, ""
        try:
            terminal = Terminal.open(ctx.box)
            first = tpl.render(instruction=ctx.instruction, terminal_state=look(terminal))
            builder.system(first[0]["content"])
            builder.user(first[1]["content"])
            ep = run_episode(terminal, self._ask(ctx.trial_id, tpl.version), first, builder,
                             timeout_s=ctx.timeout_s, max_turns=self.max_turns, stop=ctx.stop)
        except SessionStopped as exc:      # the terminal never opened
            ep = Episode()
            ep.result.status, ep.result.error = "crashed", f"the container stopped: {exc}"
        finally:
            if terminal is not None:
                recording = _recording_and_close(terminal)
        result = ep.result
        try:
            result.trajectory = builder.finish(
                notes=f"status {result.status}" + (f": {result.error}" if result.error else ""))
        except TrajectoryError:             # nothing happened at all (no terminal)
            result.trajectory = None
        result.recording, result.log = recording, ep.log_text()
        result.agent_s = time.monotonic() - t0
        result.details.update(model=self.model, temperature=self.temperature, max_turns=self.max_turns,
                              prompt_version=tpl.version)
        if terminal is not None:           # where harness time goes (the benchmark reads it)
            result.details["terminal"] = {k: round(v, 4) if isinstance(v, float) else v
                                          for k, v in asdict(terminal.stats).items()}
        return result


def _recording_and_close(terminal: Terminal) -> str:
    """The asciinema recording ("" when the container is gone), and the tmux server stopped.
    close() reads the recording once and keeps it (reading it first as well cost a second
    get_archive, 40-130 ms a rollout)."""
    try:
        terminal.close()
        return terminal.recording()
    except SessionStopped:
        return ""
