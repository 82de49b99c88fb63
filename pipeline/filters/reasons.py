"""Which curation reason each filter rule stands for, and the one reason a rejected skill shows.

The reasons are the ones people use when they label skills by hand (labels.jsonl of the dev
corpus): a skill is rejected because it needs a GUI, another OS, a paid service, an account, a
network service, has no workflow, is not terminal work, is unsafe, or is a duplicate.
"""
from __future__ import annotations

from collections.abc import Iterable

from workbench.models import FilterVerdict, Outcome

REASONS = ("unsafe", "duplicate", "os", "gui", "not_terminal_work", "paid_service", "needs_network_service",
           "needs_account", "no_workflow")

# rule name -> label reason. Every rule the runner registers has a row (tests check it).
RULE_REASONS: dict[str, str] = {
    "executable.gui": "gui",
    "executable.os": "os",
    # a binary no Debian/PyPI package provides: the machine cannot be given what it needs
    "executable.binaries": "os",
    "executable.paid_service": "paid_service",
    "workflow.steps": "no_workflow",
    "workflow.not_terminal": "not_terminal_work",
    "safety.destructive": "unsafe",
    "safety.exfiltration": "unsafe",
    "safety.prompt_injection": "unsafe",
    "safety.remote_code": "unsafe",
    "safety.jailbreak": "unsafe",
    "dedup.near_duplicate": "duplicate",
    "needs.account": "needs_account",
    # a hosted product where the work happens: the labels call Netlify, Sentry, Apify ... accounts
    "needs.saas": "needs_account",
    "needs.mcp": "needs_account",
    # a metered API key (LLM providers, E2B, Browserless) is executable.paid_service instead
    "needs.api_key": "needs_account",
    "needs.wallet": "paid_service",
    "needs.network_service": "needs_network_service",
    # the same needs found in the package's bundled code (pipeline/filters/bundled_code.py)
    "needs.code_paid_service": "paid_service",
    "needs.code_account": "needs_account",
    "needs.code_network": "needs_network_service",
    "safety.code_backdoor": "unsafe",
    # pipeline/filters/outside_kinds.py: a device, real hosts, a web API, a forge, a chain: servers elsewhere
    "needs.device": "needs_network_service",
    "needs.live_target": "needs_network_service",
    "needs.remote_api": "needs_network_service",
    "needs.live_chain": "needs_network_service",
    "needs.hosted_cli": "needs_account",
    "needs.model_api": "paid_service",
    "workflow.agent_runtime": "not_terminal_work",
}

# A rule added later without a row still gets its family's reason.
_FAMILY_REASONS = {"safety": "unsafe", "dedup": "duplicate", "workflow": "no_workflow",
                   "needs": "needs_account", "executable": "os"}

# The order in which a rejected skill's reasons win, most decisive first:
# - unsafe: a hazard is reported whatever else is wrong;
# - os, gui: the skill cannot run on a headless Linux machine at all;
# - not_terminal_work: the work itself is not done in a shell, whatever it would use;
# - paid_service, needs_network_service, needs_account: what the tool needs from outside:
#   money first; then a server it talks to (the key or login for that server only opens it,
#   so the server is the cause); then an identity with a vendor. These are properties of
#   the tool: a fuller text would not fix them;
# - no_workflow last: it is a property of this text, and the one cause left when nothing
#   else is wrong (hand labels name the outside need first when both hold);
# - duplicate after all: a copy is dropped even when it is otherwise fine, but a copy that is
#   also unfit shows what is unfit (the labelling brief calls duplicate "rarely usable" as a
#   label: a person judges the content). REASONS keeps its order for the judge's vocabulary.
PRIORITY = tuple(r for r in REASONS if r != "duplicate") + ("duplicate",)


# The LLM judge (pipeline/filters/llm_judge.py) gives a reason per verdict: its evidence starts
# `<reason>: ` (a warning's, `no usable verdict: `, carries none).
JUDGE_RULE = "judge.llm"


def reason_of(rule: str, evidence: str | None = None) -> str | None:
    """The label reason of one rule name (of the judge's verdict: from its evidence); None for
    a rule that says nothing about fitness (e.g. `error.<rule>`, a crashed rule)."""
    if rule == JUDGE_RULE:
        head = (evidence or "").split(":", 1)[0].strip()
        return head if head in REASONS else None
    if rule in RULE_REASONS:
        return RULE_REASONS[rule]
    return _FAMILY_REASONS.get(rule.split(".", 1)[0])


def primary_reason(verdicts: Iterable[FilterVerdict | tuple[str, ...]]) -> str | None:
    """The one reason a skill shows: among its failed rules (or, with none failed, its
    warnings) the reason that comes first in PRIORITY; None when no rule fired.

    Takes verdicts, or (rule, outcome) pairs with the evidence as an optional third item."""
    fired = [(v.rule, str(v.outcome), v.evidence) if isinstance(v, FilterVerdict)
             else (v[0], str(v[1]), v[2] if len(v) > 2 else None) for v in verdicts]
    for outcome in (Outcome.FAIL, Outcome.WARN):
        found = {reason_of(rule, evidence) for rule, o, evidence in fired if o == outcome} - {None}
        if found:
            return min(found, key=PRIORITY.index)
    return None
