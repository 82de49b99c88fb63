"""How many tokens each stage may answer with: the `max_tokens` of every call.

Without a cap a small model that starts repeating itself at temperature 0 generates until
the server's context is full (issue 26: a planner call at 2,470 tokens and still going).
A stage's cap is what its answer needs with room to spare: the size of its schema's
fields in the prompts' own limits, not a measured distribution (none exists yet).
A workspace overrides any of them in config.json ``llm.answer_budgets``.
"""
from __future__ import annotations

#: Tokens per stage name (the ``stage`` every call passes); a name ending in ``*`` covers
#: every stage that starts with it.
STAGE_BUDGETS: dict[str, int] = {
    "scenario_inference": 1024,      # two short scenario records
    "curation_judge": 768,           # a verdict, a reason, a few flags
    "bridge_verification": 512,      # yes/no and a sentence
    "synth_plan": 2048,              # goal, a handful of steps with commands
    "synth_instruction": 1024,       # instruction.md
    "synth_environment": 3072,       # Dockerfile and seeded files
    "synth_solution": 3072,          # solve.sh and helpers
    "synth_tests": 3072,             # a pytest file
    "synth_repair_*": 3072,          # a repaired artifact, as large as the one it replaces
    "task_judge": 768,
    "trajectory_judge": 1024,
    "agent_terminus2": 1024,         # one turn: analysis, plan, a few commands
    "evolve_task": 8192,             # a whole rewritten task: environment, instruction, solution, tests (a
                                     # replayed variant runs to ~33k characters)
}
DEFAULT_BUDGET = 2048


def answer_budget(stage: str, overrides: dict[str, int] | None = None) -> int:
    """The cap for `stage`: an exact name before a ``*`` prefix, the workspace's before ours."""
    for table in (overrides or {}, STAGE_BUDGETS):
        if stage in table:
            return _positive(stage, table[stage])
        prefixed = [k for k in table if k.endswith("*") and stage.startswith(k[:-1])]
        if prefixed:
            return _positive(stage, table[max(prefixed, key=len)])
    return DEFAULT_BUDGET


def _positive(stage: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"answer budget for {stage!r} must be a positive whole number of tokens, not {value!r}")
    return value
