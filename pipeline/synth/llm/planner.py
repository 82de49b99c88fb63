"""The planner (issue 13, Deliver 1): a path with its full context -> a `Plan`.

The prompt carries, for every step, what the skill is (name, description, SKILL.md body,
parsed steps), what it runs (tools, binaries), what it reads and leaves (inputs, outputs,
pre/post scenarios in FACET's five dimensions) and the bridge to the next step. A reply
that fits the schema but not the path (a step without a subgoal, a skill named wrongly) is
asked again once with the problems; then the path gets no task ("plan: <why>").
"""
from __future__ import annotations

import re

from pipeline.synth.exercise.script_facts import IMAGE_BINARIES
from pipeline.synth.fidelity_rubric import teaching
from pipeline.synth.llm.calls import LLMCaller
from pipeline.synth.llm.models import PLAN, Plan
from pipeline.synth.protocol import PathContext, StepContext
from workbench.llm.client import StructuredOutputError

BODY_CAP = 3000          # characters of SKILL.md per step: the method, not the whole manual
STEPS_CAP = 12           # parsed steps listed per skill
# What the base image offers (workbench.sandbox.base_image.PACKAGES, as a person names them).
BASE_TOOLS = ("bash, coreutils, findutils, grep, sed, gawk, diffutils, patch, procps, tar, gzip, bzip2, xz, "
              "zip/unzip, file, python3 (standard library only) with pytest, git, jq, sqlite3, make, tmux, bc, "
              "cron, zstd, curl (loopback only), openssl, gnupg, acl (setfacl/getfacl), iproute2 (ss, ip), logrotate")


class PlanError(ValueError):
    """No usable plan for the path; the message says why (the outcome's error is 'plan: <why>')."""


def _cap(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[:limit].rstrip() + f"\n[... {len(text) - limit} more characters cut]"


def step_text(k: int, sc: StepContext, *, body_cap: int = BODY_CAP) -> str:
    """One step of the path as the prompts show it."""
    s = sc.step
    lines = [f"## Step {k}: skill {s.skill_name.strip() or s.skill_id} (category {s.category or 'uncategorized'})",
             f"Description: {(s.description or '').strip() or '(none)'}"]
    tools = list(dict.fromkeys([*sc.tools, *sc.bins]))
    lines.append(f"Tools it runs: {', '.join(tools) or '(none recognised)'}")
    lines.append(teaching_line(s))
    if s.parts.consumes or s.parts.produces:
        lines.append(f"State kinds it reads: {', '.join(s.parts.consumes) or '-'}; "
                     f"leaves: {', '.join(s.parts.produces) or '-'}")
    if sc.inputs:
        lines.append(f"Inputs: {', '.join(sc.inputs)}")
    if sc.outputs:
        lines.append(f"Outputs: {', '.join(sc.outputs)}")
    if sc.pre is not None:
        lines.append(f"Precondition: {sc.pre.canonical} ({sc.pre.as_text()})")
    if sc.post is not None:
        lines.append(f"Postcondition: {sc.post.canonical} ({sc.post.as_text()})")
    if sc.bridge is not None:
        b = sc.bridge
        lines.append(f"Bridge to the next step ({b.to_skill}): {b.verdict}, similarity {b.similarity:.2f}"
                     + (f": {b.reason}" if b.reason else ""))
    if s.parts.steps:
        lines.append("Parsed steps:")
        lines += [f"  {i}. {t}" for i, t in enumerate(s.parts.steps[:STEPS_CAP], 1)]
    if body_cap and s.parts.body:
        body = _cap(s.parts.body, body_cap)
        fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", body)), default=0))
        lines += ["SKILL.md (start):", f"{fence}markdown", body, fence]   # a longer fence than any inside
    return "\n".join(lines)


TEACHES_CAP = 5   # documented command lines listed per skill


def teaching_line(s) -> str:
    """What the skill teaches that a step can do for real (issue 24.5): its documented commands of
    the installed tools it is about. A step that runs one exercises the skill (rubric 2); one that
    only shares a tool or a file format does not, and the prompt says so."""
    teach = teaching(s.parts.body, s.skill_name, s.description, tuple(s.parts.tools))
    usable = [c.line for c in teach.commands if c.tool in IMAGE_BINARIES]
    if usable:
        shown = "; ".join(f"`{line}`" for line in list(dict.fromkeys(usable))[:TEACHES_CAP])
        return (f"What it teaches (documented commands of {', '.join(teach.about)}; the step's solution must run "
                f"one of these tools this way, and name it in `uses`): {shown}")
    if teach.about:
        return (f"What it teaches: commands of {', '.join(teach.about)}, which this machine does not have: the step "
                "can only share a tool or a file format with it (it will not count as exercising the skill)")
    return ("What it teaches: no documented command of a tool of its own: the step can only share a tool or a file "
            "format with it (it will not count as exercising the skill)")


def path_text(path: PathContext, *, body_cap: int = BODY_CAP) -> str:
    return "\n\n".join(step_text(k, sc, body_cap=body_cap) for k, sc in enumerate(path.steps, 1))


def _name_key(name: str) -> str:
    """A skill name as a model may spell it ("JQ Filter" for jq-filter): case and punctuation aside."""
    return re.sub(r"[^a-z0-9]+", "", name.lower())


def plan_problems(plan: Plan, path: PathContext) -> list[str]:
    """What makes a schema-valid plan unusable for this path."""
    n = len(path.steps)
    problems = []
    steps = [g.step for g in plan.subgoals]
    missing = [k for k in range(1, n + 1) if k not in steps]
    if missing:
        problems.append(f"no subgoal for step(s) {', '.join(map(str, missing))} of {n}")
    beyond = sorted({k for k in steps if k > n})
    if beyond:
        problems.append(f"subgoal(s) for step(s) {', '.join(map(str, beyond))}, but the path has {n} steps")
    names = {k: sc.step.skill_name.strip() or sc.step.skill_id for k, sc in enumerate(path.steps, 1)}
    for g in plan.subgoals:
        want = names.get(g.step)
        if want is not None and _name_key(g.skill) != _name_key(want):
            problems.append(f"subgoal of step {g.step} names skill {g.skill!r}, the step's skill is {want!r}")
    for h in plan.handoffs:
        if not h.path.startswith("/"):
            problems.append(f"handoff {h.from_step}->{h.to_step}: path {h.path!r} is not absolute")
    return problems


def make_plan(caller: LLMCaller, path: PathContext, *, item: str, timer: dict | None = None) -> Plan:
    """Ask for the plan; raises PlanError when none fits (the client already re-asked for JSON).
    BudgetExceeded and LLMCallError (the endpoint failing) propagate."""
    values = {"path_id": path.path_id, "n_steps": str(len(path.steps)), "steps": path_text(path),
              "base_tools": BASE_TOOLS}
    extra: list[dict] = []
    for turn in range(2):
        try:
            res = caller.render_and_ask(PLAN, item, Plan, timer=timer, extra=extra, **values)
        except StructuredOutputError as exc:
            raise PlanError(f"no valid JSON for the plan: {exc}") from None
        plan = res.parsed
        problems = plan_problems(plan, path)
        if not problems:
            return plan
        extra = [{"role": "assistant", "content": res.text},
                 {"role": "user", "content": "The plan does not fit the path: " + "; ".join(problems)
                  + ". Reply with the whole corrected plan."}]
    raise PlanError("; ".join(problems))
