"""What terminus-2 says to the model after each reply (Harbor's wording, so a model tuned on
Harbor's Terminus-2 reads the same protocol). The first prompt is the template
workbench/prompts/agent_terminus2.md; these are short enough to live here."""
from __future__ import annotations

from pipeline.agents.terminus2.parser import ReplyError

STAGE = "agent_terminus2"
# The sentence the scripted models (scripted.py) look for; Harbor asks the same question.
CONFIRM_QUESTION = "Are you sure you want to mark the task as complete?"
PARSE_ERROR_HEAD = "Previous response had parsing errors:"
WARNINGS_HEAD = "Previous response had warnings:"


def _bullets(warnings: list[str]) -> str:
    return "- " + "\n- ".join(warnings)


def terminal_state(new_output: str, screen: str | None = None) -> str:
    """The terminal as the model sees it: what appeared since the last look, or, when nothing
    did, the visible screen (Harbor's incremental output)."""
    if new_output.strip() or screen is None:
        return f"New Terminal Output:\n{new_output}"
    return f"Current Terminal Screen:\n{screen}"


def parse_error(exc: ReplyError) -> str:
    """Nothing ran: the model is told what was wrong with its reply."""
    text = f"{PARSE_ERROR_HEAD}\nERROR: {exc}"
    if exc.warnings:
        text += f"\nWARNINGS: {_bullets(exc.warnings)}"
    return text + "\n\nPlease fix these issues and provide a proper JSON response."


def observation(state: str, warnings: list[str]) -> str:
    if warnings:
        return f"{WARNINGS_HEAD}\nWARNINGS: {_bullets(warnings)}\n\n{state}"
    return state


def confirmation(state: str) -> str:
    return (f"Current terminal state:\n{state}\n\n{CONFIRM_QUESTION} This will trigger your solution "
            "to be graded and you won't be able to make any further corrections. If so, include "
            '"task_complete": true in your JSON response again.')
