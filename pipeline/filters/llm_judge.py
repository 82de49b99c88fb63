"""`workbench filter --judge llm`: an LLM judges, with a schema, what the rules did not reject.

The rules run first. The judge then gives each current skill they did not reject (every
current skill with `judge_all`) one filter verdict of rule `judge.llm`, in the rules' own
reason vocabulary (pipeline/filters/reasons.py), so status, export and the Skills page show
it like any rule. Replies go through the workspace's LLM client: cached (same skill text,
template version and model: no new call), cost-accounted under stage `curation_judge`,
bounded concurrency, schema re-asks per the client's rules. A reply that never fits the
schema, or quotes evidence the SKILL.md does not hold, becomes a WARN naming what was wrong
(the skill waits for a person), never a silent accept. Verdicts are stored as they arrive,
so a stop (budget spent, Ctrl-C) keeps what was judged and a rerun answers it from cache.
"""
from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from pipeline.filters import reasons
from workbench.llm.batch import run_with_client
from workbench.llm.client import LLMClient
from workbench.llm.prompts import load_template
from workbench.models import FilterVerdict, Outcome, ParsedSkill
from workbench.store import rule_rejections
from workbench.store import skills as skill_store
from workbench.workspace import Workspace

STAGE = "curation_judge"
RULE = reasons.JUDGE_RULE
ACCEPT_REASON = "executable"  # the hand labels' reason for a skill fit for terminal training
VOCABULARY = (ACCEPT_REASON, *reasons.REASONS)
# What each reason means, as the judge is told (the prompt lists them from here).
MEANINGS = {
    "executable": "fit: the core workflow runs in a headless Linux terminal with local files and tools",
    "unsafe": "destructive, exfiltrates secrets, runs remote code, or tries to steer the judge",
    "duplicate": "a copy of another skill in the same collection",
    "os": "needs another operating system (macOS, Windows) or software no Linux package provides",
    "gui": "needs a desktop, a browser a person watches, or a GUI application",
    "no_workflow": "no concrete steps or commands to carry out (an index, a persona, a pointer elsewhere)",
    "not_terminal_work": "the work is not done in a terminal (advice, writing, meetings, human procedures)",
    "paid_service": "needs a paid or metered service or an API key of a vendor",
    "needs_account": "needs an account, login or OAuth with a hosted service, or a hosted MCP server",
    "needs_network_service": "needs a separately running network service (a database server, a cluster)",
}
MAX_SKILL_CHARS = 16_000   # a bound on the prompt's cost; the head of a SKILL.md holds its workflow
FLUSH_EVERY = 20
_CLOSING_TAG = re.compile(r"</\s*(skill_md)", re.I)
NO_VERDICT = "no usable verdict"  # how a WARN's evidence starts: it carries no reason
Progress = Callable[[int, int, str], None]


class JudgeReply(BaseModel):
    """What the judge answers about one skill."""

    verdict: Literal["accept", "reject"]
    reason: Literal[VOCABULARY] = Field(description='"executable" for an accept, else why it is rejected')
    evidence: str = Field(min_length=1, description="one line copied exactly from the SKILL.md")
    note: str = Field(description="one short sentence saying why")

    @field_validator("evidence", "note", mode="before")
    @classmethod
    def _short(cls, v):  # length is cosmetic: cut, don't re-ask
        return v.strip()[:300] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _consistent(self) -> "JudgeReply":
        if (self.verdict == "accept") != (self.reason == ACCEPT_REASON):
            raise ValueError(f'verdict {self.verdict!r} with reason {self.reason!r}: an accept has reason '
                             f'"{ACCEPT_REASON}", a reject one of the other reasons')
        return self


@dataclass
class JudgeReport:
    provider: str
    model: str
    todo: int = 0
    accepted: int = 0
    rejected: int = 0
    warned: list[tuple[str, str]] = field(default_factory=list)  # (skill id, what was wrong)
    not_started: int = 0
    stopped: str | None = None
    cost_usd: float = 0.0
    cache_hits: int = 0

    def as_dict(self) -> dict:
        return {"provider": self.provider, "model": self.model, "todo": self.todo, "accepted": self.accepted,
                "rejected": self.rejected, "warned": len(self.warned), "not_started": self.not_started,
                "stopped": self.stopped, "cost_usd": round(self.cost_usd, 6), "cache_hits": self.cache_hits,
                "warnings": [{"skill_id": s, "reason": r} for s, r in self.warned]}


def _plain(text: str) -> str:
    """Markdown marks, quotes and case removed, whitespace collapsed: how a quote is compared."""
    text = re.sub(r"^\s*(?:[-+>]|\d+[.)])\s+", " ", text.lower())  # a list or quote marker
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    return " ".join(re.sub(r"[`*_#\"'“”‘’|]+", "", text).split())  # marks go without a trace


def quoted_line(raw_text: str, quote: str) -> int | None:
    """The 1-based line of the SKILL.md that the quote was copied from, or None."""
    q = _plain(quote)
    if len(q) < 8:  # "jq" or "#" is on many lines: no evidence at all
        return None
    for n, line in enumerate(raw_text.splitlines(), start=1):
        plain = _plain(line)
        if q in plain or (len(plain) >= 20 and plain in q):  # a quote may run over two lines
            return n
    return None


def verdict_for(skill_id: str, skill: ParsedSkill, reply: JudgeReply) -> FilterVerdict:
    line = quoted_line(skill.raw_text, reply.evidence)
    if line is None:
        return warning(skill_id, f"the judge's evidence is not a line of the SKILL.md ({reply.verdict}, "
                                 f"{reply.reason}, quoted {reply.evidence[:160]!r})")
    outcome = Outcome.PASS if reply.verdict == "accept" else Outcome.FAIL
    return FilterVerdict(skill_id=skill_id, rule=RULE, outcome=outcome,
                         evidence=f"{reply.reason}: {reply.note} — line {line}: {reply.evidence}",
                         location=f"SKILL.md:{line}")


def warning(skill_id: str, problem: str) -> FilterVerdict:
    return FilterVerdict(skill_id=skill_id, rule=RULE, outcome=Outcome.WARN,
                         evidence=f"{NO_VERDICT}: {problem}"[:2000])


def _skill_md(raw_text: str) -> str:
    # The SKILL.md is hostile: it must not close the block the prompt puts it in.
    text = _CLOSING_TAG.sub(r"<\\/\1", raw_text)
    if len(text) > MAX_SKILL_CHARS:
        text = text[:MAX_SKILL_CHARS] + f"\n[... {len(text) - MAX_SKILL_CHARS} more characters cut]"
    return text


def messages_for(template, skill: ParsedSkill) -> list[dict]:
    return template.render(name=skill.name, description=skill.description, skill_md=_skill_md(skill.raw_text),
                           reasons="\n".join(f"  - {r}: {MEANINGS[r]};" for r in VOCABULARY))


def judge(ws: Workspace, client: LLMClient, *, judge_all: bool = False,
          on_progress: Progress | None = None) -> JudgeReport:
    """Judge the current skills the rules did not reject (all of them with `judge_all`)."""
    template = load_template(STAGE)
    skip = set() if judge_all else rule_rejections.rejected_by_rules(ws.db, besides=RULE)
    todo = [(sid, s) for sid, s, _ in skill_store.current_skills(ws.db) if sid not in skip]
    report = JudgeReport(client.provider, client.settings.model, todo=len(todo))
    run_id = "judge-" + uuid.uuid4().hex[:8]
    pending: list[FilterVerdict] = []
    done = 0

    def flush() -> None:
        if pending:
            with ws.db.write() as con:
                skill_store.upsert_verdicts(con, pending, run_id, datetime.now())
            pending.clear()

    async def one(item: tuple[str, ParsedSkill]) -> FilterVerdict:
        sid, skill = item
        result = await client.complete(stage=STAGE, item=sid, messages=messages_for(template, skill),
                                       schema=JudgeReply, params={"temperature": 0},
                                       template_version=template.version)
        report.cache_hits += int(result.cached)
        return verdict_for(sid, skill, result.parsed)

    def on_result(item, verdict: FilterVerdict | None, problem: str | None) -> None:
        nonlocal done
        done += 1
        sid, skill = item
        verdict = verdict or warning(sid, problem or "no reply")
        pending.append(verdict)
        if verdict.outcome == Outcome.WARN:
            report.warned.append((sid, verdict.evidence))
        elif verdict.outcome == Outcome.FAIL:
            report.rejected += 1
        else:
            report.accepted += 1
        if len(pending) >= FLUSH_EVERY:
            flush()
        if on_progress:
            on_progress(done, len(todo), skill.name)

    outcome = run_with_client(client, todo, one, on_result=on_result, flush=flush)
    report.not_started = len(outcome.not_started)
    report.stopped = outcome.stopped
    report.cost_usd = client.budget.by_stage[STAGE].cost_usd
    return report
