"""What the LLM is asked to return at each stage (structured output, validated by pydantic).

The schema class name travels in the request (`response_format.json_schema.name`), and
each stage's template names its stage on its first line (`Stage: synth_plan.`), so a
scripted replay can tell the stages apart.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# Stage names: llm_calls.stage, prompt template file names (workbench/prompts/<stage>.md).
PLAN = "synth_plan"
ENVIRONMENT = "synth_environment"
INSTRUCTION = "synth_instruction"
SOLUTION = "synth_solution"
TESTS = "synth_tests"
REPAIR = {"environment": "synth_repair_environment", "solution": "synth_repair_solution",
          "tests": "synth_repair_tests", "instruction": "synth_repair_instruction"}
JUDGE = "task_judge"


class Subgoal(BaseModel):
    step: int = Field(ge=1)                         # the path step it belongs to (1-based)
    skill: str                                      # the skill (name) it exercises
    description: str = Field(min_length=8)
    tools: list[str] = Field(default_factory=list)  # binaries it uses
    uses: str = ""                                  # the skill's documented command it runs (issue 24.5)
    success_conditions: list[str] = Field(min_length=1)   # observable: files, contents, exit codes


class Handoff(BaseModel):
    from_step: int = Field(ge=1)
    to_step: int = Field(ge=1)
    path: str                                       # absolute, e.g. /app/out/report.csv
    format: str                                     # csv | json | sqlite | text | tar.gz | ...
    schema_: str = Field("", alias="schema")        # columns, keys, or a sentence
    model_config = {"populate_by_name": True}


class Plan(BaseModel):
    goal: str = Field(min_length=12)                # the user goal tying the skills together
    subgoals: list[Subgoal] = Field(min_length=1)
    handoffs: list[Handoff] = Field(default_factory=list)
    initial_files: list[str] = Field(default_factory=list)   # paths the environment must hold
    services: list[str] = Field(default_factory=list)        # daemons the task needs running


class FileSpec(BaseModel):
    path: str                                       # absolute path in the image, under /app (or /etc, /srv, ...)
    content: str
    executable: bool = False
    encoding: Literal["utf-8", "base64"] = "utf-8"  # base64: content is the file's bytes (archives, images)


class EnvManifest(BaseModel):
    """The environment: `FROM` the base (or a domain image), files, then setup commands."""
    image: str = "base"                             # "base" or a domain image name we build locally
    files: list[FileSpec] = Field(default_factory=list)
    setup_commands: list[str] = Field(default_factory=list)   # RUN lines, no network at build
    env: dict[str, str] = Field(default_factory=dict)         # ENV lines


class Instruction(BaseModel):
    title: str = Field(min_length=4)
    text: str = Field(min_length=40)                # instruction.md body (markdown, no solution)


class Solution(BaseModel):
    solve_sh: str = Field(min_length=10)            # bash, run from /app


class TestsDraft(BaseModel):
    """tests/test_outputs.py (pytest; each test's docstring a sentence of the instruction)."""
    __test__ = False
    test_py: str = Field(min_length=20)
    weights: dict[str, float] = Field(default_factory=dict)   # test function name -> weight (default 1)
