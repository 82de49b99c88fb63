"""The Terminus-2 loop against a tiny fake terminal, with the real LLM client talking to the
replay server: confirmation twice, max turns, a parse error fed back without running
anything, the agent timeout, cancel, a stopped container, tokens and cost per turn."""
from __future__ import annotations

import json
import threading
import time

import pytest

from pipeline.agents.terminus2 import messages as msg
from pipeline.agents.terminus2.episode import MAX_PARSE_ERRORS_IN_ROW, run_episode
from pipeline.agents.terminus2.scripted import REPLAY_MODEL, scripted_terminus_rules
from pipeline.trajectories.atif import TrajectoryBuilder, validate_with_harbor
from tests.workbench.llm.conftest import make_settings
from workbench.llm.budget import Budget
from workbench.llm.caller import LLMCaller
from workbench.llm.client import LLMClient
from workbench.llm.replay_server import ReplayServer, Rule, Script
from workbench.llm.settings import Price
from workbench.sandbox.terminal import SessionStopped, TerminalStats


class FakeTerminal:
    """Keys in, canned output out: `$ <keys>` per line typed, or what `outputs` says."""

    def __init__(self, stop_after: int | None = None, gone: bool = False):
        self.gone = gone                    # the container is gone: every call raises
        self.stats = TerminalStats()
        self.sent: list[str] = []
        self.waits: list[float] = []
        self._new: list[str] = []
        self.stop_after = stop_after

    def _check(self):
        if self.gone:
            raise SessionStopped("the trial took the container back")

    def send_keys(self, keys: str) -> None:
        self._check()
        if self.stop_after is not None and len(self.sent) >= self.stop_after:
            raise SessionStopped("memory limit reached (exit 137)")
        self.sent.append(keys)
        self._new.append(f"$ {keys}")

    def wait(self, seconds: float) -> None:
        self.waits.append(seconds)
        time.sleep(seconds)
        self.stats.waited_s += seconds

    def read_new(self) -> str:
        self._check()
        out, self._new = "".join(self._new), []
        return out

    def screen(self) -> str:
        return "root@box:/app# "


def _reply(*keys: str, complete: bool = False, duration: float = 0.01) -> str:
    return json.dumps({"analysis": "a", "plan": "p", "task_complete": complete,
                       "commands": [{"keystrokes": k, "duration": duration} for k in keys]})


def _scripted(replies):
    """A rule answering the n-th request with replies[n] (the last one from then on)."""
    seen = []

    def reply(body):
        seen.append(body["messages"])
        return replies[min(len(seen) - 1, len(replies) - 1)]
    return Rule(match="Task Description", reply=reply), seen


def _first_prompt(caller):
    tpl = caller.template(msg.STAGE)
    return tpl.render(instruction="Create /app/out.txt", terminal_state="Current Terminal Screen:\n$ ")


def _episode(srv, terminal, *, timeout_s=30.0, max_turns=10, stop=None, budget=None):
    settings = make_settings(srv, model=REPLAY_MODEL, prices={REPLAY_MODEL: Price(input_per_mtok=1.0,
                                                                                  output_per_mtok=2.0)})
    caller = LLMCaller(LLMClient(settings, budget=budget))
    try:
        def ask(messages):
            timer = {}
            res = caller.ask(msg.STAGE, "trial-1", messages, None, timer=timer, params={"temperature": 0})
            return res, timer["llm_s"]
        builder = TrajectoryBuilder("trial-1", "terminus-2", "1", REPLAY_MODEL)
        first = _first_prompt(caller)
        builder.system(first[0]["content"])
        builder.user(first[1]["content"])
        ep = run_episode(terminal, ask, first, builder, timeout_s=timeout_s, max_turns=max_turns, stop=stop)
        return ep, builder
    finally:
        caller.close()


def test_task_complete_is_confirmed_once_more_before_the_episode_ends():
    rule, seen = _scripted([_reply("touch /app/out.txt\n", complete=True), _reply("ls\n", complete=True)])
    term = FakeTerminal()
    with ReplayServer(Script([rule])) as srv:
        ep, builder = _episode(srv, term)
    assert ep.result.status == "completed" and ep.result.turns == 2 and ep.result.error == ""
    assert term.sent == ["touch /app/out.txt\n", "ls\n"]           # the confirming turn's commands run too
    assert msg.CONFIRM_QUESTION in seen[1][-1]["content"]            # asked with the terminal state
    assert "$ touch /app/out.txt" in seen[1][-1]["content"]
    doc = builder.finish()
    agent_steps = [s for s in doc["steps"] if s["source"] == "agent"]
    assert [s["tool_calls"][-1]["function_name"] for s in agent_steps] == ["mark_task_complete"] * 2
    assert agent_steps[0]["extra"]["analysis"] == "a" and agent_steps[0]["metrics"]["prompt_tokens"] > 0


def test_a_completion_that_is_not_confirmed_asks_again_next_time():
    rule, seen = _scripted([_reply(complete=True), _reply("echo more\n"), _reply(complete=True),
                            _reply(complete=True)])
    with ReplayServer(Script([rule])) as srv:
        ep, _ = _episode(srv, FakeTerminal())
    assert ep.result.status == "completed" and ep.result.turns == 4
    asked = [msg.CONFIRM_QUESTION in m[-1]["content"] for m in seen[1:]]
    assert asked == [True, False, True]


def test_max_turns_end_an_episode_that_never_completes():
    with ReplayServer(Script(scripted_terminus_rules({}, "never_completes"))) as srv:
        ep, builder = _episode(srv, FakeTerminal(), max_turns=3)
    assert ep.result.status == "never_completed" and ep.result.turns == 3 and "3 turns" in ep.result.error
    assert builder.steps == 2 + 3


def test_a_parse_error_is_fed_back_and_nothing_runs():
    rule, seen = _scripted(["Sure! I'll run ls for you.", _reply("ls\n", complete=True), _reply(complete=True)])
    term = FakeTerminal()
    with ReplayServer(Script([rule])) as srv:
        ep, builder = _episode(srv, term)
    assert ep.result.status == "completed" and ep.result.parse_errors == 1 and ep.result.turns == 3
    assert term.sent == ["ls\n"]                                     # the bad reply ran nothing
    feedback = seen[1][-1]["content"]
    assert feedback.startswith(msg.PARSE_ERROR_HEAD) and "No valid JSON found" in feedback
    assert seen[1][-2] == {"role": "assistant", "content": "Sure! I'll run ls for you."}
    bad = builder.finish()["steps"][2]
    assert bad["message"] == "Sure! I'll run ls for you." and "tool_calls" not in bad


def test_too_many_parse_errors_in_a_row_end_the_episode():
    term = FakeTerminal()
    with ReplayServer(Script(scripted_terminus_rules({}, "malformed"))) as srv:
        ep, _ = _episode(srv, term)
    assert ep.result.status == "parse_errors" and ep.result.parse_errors == ep.result.turns == MAX_PARSE_ERRORS_IN_ROW
    assert term.sent == []


def test_the_agent_timeout_cuts_the_episode_and_keeps_what_happened():
    rule, _ = _scripted([_reply("sleep 1\n", "sleep 1\n", "sleep 1\n", duration=0.4)])
    term = FakeTerminal()
    t0 = time.monotonic()
    with ReplayServer(Script([rule])) as srv:
        ep, builder = _episode(srv, term, timeout_s=1.0)
    assert ep.result.status == "timeout" and "1 s" in ep.result.error
    assert time.monotonic() - t0 < 5
    assert term.sent and sum(term.waits) <= 1.0 + 1e-6             # no wait ran past the deadline
    assert ep.result.details["waited_s"] == pytest.approx(sum(term.waits), abs=0.1)
    doc = builder.finish()
    assert doc["steps"][-1]["observation"]["results"][0]["content"].count("$ sleep 1") >= 1


def test_a_cancelled_batch_stops_at_the_next_turn():
    stop = threading.Event()
    rule, seen = _scripted([_reply("echo 1\n")])

    def reply_and_cancel(body):
        stop.set()
        return rule.reply(body)
    with ReplayServer(Script([Rule(match="Task Description", reply=reply_and_cancel)])) as srv:
        ep, _ = _episode(srv, FakeTerminal(), stop=stop)
    assert ep.result.status == "stopped" and ep.result.turns == 1 and len(seen) == 1


def test_a_stopped_container_ends_the_episode_as_crashed_with_why():
    rule, _ = _scripted([_reply("echo 1\n", "echo 2\n")])
    with ReplayServer(Script([rule])) as srv:
        ep, builder = _episode(srv, FakeTerminal(stop_after=1))
    assert ep.result.status == "crashed" and "memory limit reached" in ep.result.error
    assert builder.steps == 2                                          # the prompts; the turn never finished


def test_a_container_taken_back_after_a_cancel_or_past_the_timeout_is_not_a_crash():
    stop = threading.Event()
    rule, _ = _scripted([_reply("echo 1\n", "echo 2\n")])

    class TakenBack(FakeTerminal):
        def wait(self, seconds):
            stop.set()                      # the batch is cancelled while the command runs ...
            super().wait(seconds)
            self.gone = True                # ... and the trial takes the container back

    with ReplayServer(Script([rule])) as srv:
        ep, _ = _episode(srv, TakenBack(), stop=stop)
        assert ep.result.status == "stopped" and "cancelled" in ep.result.error
        slow = Rule(match="Task Description", reply=lambda body: (time.sleep(0.6), _reply("echo 1\n"))[1])
        srv.set_rules([slow])
        ep, _ = _episode(srv, FakeTerminal(gone=True), timeout_s=0.5)   # the reply came after the cut-off
    assert ep.result.status == "timeout" and "took the container back" in ep.result.error


def test_a_spent_budget_stops_the_episode_and_says_so():
    rule, _ = _scripted([_reply("echo 1\n")])
    with ReplayServer(Script([rule])) as srv:
        ep, _ = _episode(srv, FakeTerminal(), budget=Budget(1e-9))
    assert ep.result.status == "stopped" and ep.result.details["budget_exceeded"] and "budget" in ep.result.error
    assert ep.result.turns == 1                                               # the first call spent it


def test_an_endpoint_that_is_down_crashes_the_episode_as_an_endpoint_fault():
    with ReplayServer() as srv:
        settings = make_settings(srv, model=REPLAY_MODEL, max_retries=0)
    # the server is gone: nothing listens on its port now
    caller = LLMCaller(LLMClient(settings))
    try:
        builder = TrajectoryBuilder("t", "terminus-2", "1", REPLAY_MODEL)

        def ask(messages):
            return caller.ask(msg.STAGE, "t", messages, None), 0.0
        ep = run_episode(FakeTerminal(), ask, _first_prompt(caller), builder, timeout_s=10)
    finally:
        caller.close()
    assert ep.result.status == "crashed" and ep.result.details["endpoint_fault"].startswith("APIConnectionError")


def test_tokens_cost_and_llm_time_add_up_per_turn_and_the_trajectory_is_valid(tmp_path):
    rule, _ = _scripted([_reply("ls\n"), _reply(complete=True), _reply(complete=True)])
    with ReplayServer(Script([rule]), latency_s=0.05) as srv:
        ep, builder = _episode(srv, FakeTerminal())
    doc = builder.finish()
    metrics = [s["metrics"] for s in doc["steps"] if s["source"] == "agent"]
    assert ep.result.prompt_tokens == sum(m["prompt_tokens"] for m in metrics) == doc["final_metrics"]["total_prompt_tokens"]
    assert ep.result.cost_usd == pytest.approx(sum(m["cost_usd"] for m in metrics)) and ep.result.cost_usd > 0
    assert ep.result.llm_s >= 3 * 0.05 and all(m["extra"]["llm_s"] >= 0.05 for m in metrics)
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc))
    assert validate_with_harbor(path) == []

