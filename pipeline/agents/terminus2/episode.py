"""One Terminus-2 episode: the loop of model reply → parse → keystrokes → wait → new output,
over a terminal (workbench.sandbox.terminal.Terminal or anything with its methods).

Ends: the second `task_complete` in a row (completed), max turns (never_completed), the
agent timeout (timeout — what happened so far is kept), too many unparseable replies in a
row (parse_errors), the batch's stop event (stopped), the container stopped at a limit or an
LLM call that failed (crashed, with why), the LLM budget spent (stopped).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from pipeline.agents.protocol import AgentResult
from pipeline.agents.terminus2 import messages as msg
from pipeline.agents.terminus2.parser import Command, Reply, ReplyError, parse_reply
from pipeline.trajectories.atif import TrajectoryBuilder
from workbench.llm.budget import BudgetExceeded
from workbench.llm.client import LLMCallError, LLMResult
from workbench.sandbox.terminal import MAX_WAIT_S, SessionStopped, TerminalError

DEFAULT_MAX_TURNS = 50
MAX_PARSE_ERRORS_IN_ROW = 5
LOG_CAP_CHARS = 200_000            # agent.log: head and tail kept
_REPLY_CAP_CHARS = 20_000          # an unparseable reply as kept in the trajectory


class WaitStats(Protocol):
    waited_s: float        # seconds spent waiting as wait() was asked (not the exec around it)


class TerminalLike(Protocol):
    stats: WaitStats

    def send_keys(self, keys: str) -> None: ...
    def wait(self, seconds: float) -> Any: ...
    def read_new(self) -> str: ...
    def screen(self) -> str: ...


Ask = Callable[[list[dict]], tuple[LLMResult, float]]     # messages -> (result, seconds waited)


@dataclass
class Episode:
    """The loop's tally: `result` is the AgentResult the agent hands back (the agent adds the
    trajectory, recording, log and wall time); `messages` the conversation."""
    result: AgentResult = field(default_factory=lambda: AgentResult(status="never_completed"))
    messages: list[dict] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def log_text(self) -> str:
        text = "\n".join(self.log)
        if len(text) <= LOG_CAP_CHARS:
            return text
        half = LOG_CAP_CHARS // 2
        return f"{text[:half]}\n[... {len(text) - 2 * half} characters of the log left out ...]\n{text[-half:]}"


def look(terminal: TerminalLike) -> str:
    """The terminal state for the next prompt (the screen only when nothing new appeared)."""
    new = terminal.read_new()
    return msg.terminal_state(new, None if new.strip() else terminal.screen())


def _tool_calls(turn: int, reply: Reply) -> list[dict]:
    calls = [{"tool_call_id": f"call_{turn}_{i}", "function_name": "bash_command",
              "arguments": {"keystrokes": c.keystrokes, "duration": c.duration}}
             for i, c in enumerate(reply.commands, start=1)]
    if reply.task_complete:
        calls.append({"tool_call_id": f"call_{turn}_task_complete", "function_name": "mark_task_complete",
                      "arguments": {}})
    return calls


def _metrics(res: LLMResult, seconds: float) -> dict:
    return {"prompt_tokens": res.prompt_tokens, "completion_tokens": res.completion_tokens,
            "cost_usd": res.cost_usd, "extra": {"llm_s": round(seconds, 4), "cached": res.cached}}


class _Clock:
    def __init__(self, timeout_s: float):
        self.t0 = time.monotonic()
        self.deadline = self.t0 + timeout_s

    def left(self) -> float:
        return self.deadline - time.monotonic()


def run_episode(terminal: TerminalLike, ask: Ask, messages: list[dict], builder: TrajectoryBuilder, *,
                timeout_s: float, max_turns: int = DEFAULT_MAX_TURNS,
                stop: threading.Event | None = None) -> Episode:
    """`messages`: the first prompt (system + user, already rendered); the conversation grows on
    it. The builder gets one agent step per model reply."""
    ep = Episode(messages=messages)
    r = ep.result
    clock, stop = _Clock(timeout_s), stop or threading.Event()
    pending_completion, errors_in_row = False, 0
    waited_before = terminal.stats.waited_s
    try:
        while True:
            if stop.is_set():
                r.status, r.error = "stopped", "the batch was cancelled"
                break
            if clock.left() <= 0:
                r.status, r.error = "timeout", f"agent timeout of {timeout_s:g} s reached after {r.turns} turns"
                break
            if r.turns >= max_turns:
                r.status, r.error = "never_completed", f"no confirmed task_complete in {max_turns} turns"
                break
            res, seconds = ask(ep.messages)
            r.turns += 1
            r.llm_s += seconds
            r.prompt_tokens += res.prompt_tokens
            r.completion_tokens += res.completion_tokens
            r.cost_usd += res.cost_usd
            ep.messages.append({"role": "assistant", "content": res.text})
            try:
                reply = parse_reply(res.text)
            except ReplyError as exc:
                r.parse_errors += 1
                errors_in_row += 1
                feedback = msg.parse_error(exc)
                ep.log.append(f"## turn {r.turns}: unparseable reply\n{exc}")
                builder.agent(res.text[:_REPLY_CAP_CHARS], observation=feedback, metrics=_metrics(res, seconds),
                              llm_call_count=1, model_name=res.model, extra={"turn": r.turns, "parse_error": str(exc)})
                if errors_in_row >= MAX_PARSE_ERRORS_IN_ROW:
                    r.status, r.error = "parse_errors", f"{errors_in_row} unparseable replies in a row: {exc}"
                    break
                ep.messages.append({"role": "user", "content": feedback})
                continue
            errors_in_row = 0
            timed_out = _run_commands(terminal, reply.commands, clock, stop)
            state = look(terminal)
            confirmed = reply.task_complete and pending_completion
            if reply.task_complete and not pending_completion:
                feedback = msg.confirmation(state)
            else:
                feedback = msg.observation(state, reply.warnings)
            pending_completion = reply.task_complete
            ep.log.append(f"## turn {r.turns}\n" + "".join(f"$ {c.keystrokes!r} (wait {c.duration:g} s)\n"
                                                          for c in reply.commands) + state)
            builder.agent(f"Analysis: {reply.analysis}\nPlan: {reply.plan}", tool_calls=_tool_calls(r.turns, reply),
                          observation=feedback, metrics=_metrics(res, seconds), llm_call_count=1,
                          model_name=res.model, extra={"turn": r.turns, "analysis": reply.analysis,
                                                       "plan": reply.plan, "warnings": reply.warnings})
            if timed_out:
                r.status, r.error = "timeout", f"agent timeout of {timeout_s:g} s reached during turn {r.turns}"
                break
            if confirmed:
                r.status = "completed"
                break
            ep.messages.append({"role": "user", "content": feedback})
    except SessionStopped as exc:
        # The trial takes the container back after a cancel or past the agent's time: that is
        # the stop or the timeout, not a crash.
        if stop.is_set():
            r.status, r.error = "stopped", f"the batch was cancelled ({exc})"
        elif clock.left() <= 0:
            r.status, r.error = "timeout", f"agent timeout of {timeout_s:g} s reached: {exc}"
        else:
            r.status, r.error = "crashed", f"the container stopped: {exc}"
    except TerminalError as exc:
        r.status, r.error = "crashed", f"the terminal stopped answering: {exc}"
    except BudgetExceeded as exc:
        r.status, r.error = "stopped", f"the LLM budget is spent: {exc}"
        r.details["budget_exceeded"] = True
    except LLMCallError as exc:
        r.status, r.error = "crashed", f"LLM call failed: {exc}"
        r.details["llm_error_class"] = exc.error_class
        if exc.endpoint_fault:         # the batch halts and leaves this rollout for resume
            r.details["endpoint_fault"] = f"{exc.error_class}: {exc}"
    # The waits the model asked for, as the terminal measured them inside the container: not
    # harness time (AgentResult.overhead_s leaves them out).
    r.details["waited_s"] = round(terminal.stats.waited_s - waited_before, 4)
    ep.log.append(f"## ended: {r.status}" + (f" ({r.error})" if r.error else ""))
    return ep


def _run_commands(terminal: TerminalLike, commands: list[Command], clock: _Clock, stop: threading.Event) -> bool:
    """Send each command and wait what it asked (capped at MAX_WAIT_S and the time left).
    True when the agent timeout cut the batch of commands short."""
    for cmd in commands:
        if stop.is_set():
            return False
        left = clock.left()
        if left <= 0:
            return True
        terminal.send_keys(cmd.keystrokes)
        # Always one wait, even of 0 s: the keys go out with the terminal's next look.
        terminal.wait(min(cmd.duration, MAX_WAIT_S, left))
    return clock.left() <= 0
