"""One label reason per rule, and the one reason a rejected skill shows."""
from __future__ import annotations

import re

from pipeline.filters import reasons, runner
from workbench.models import FilterVerdict


def _rule_names_registered() -> set[str]:
    """Every rule name the runner's rules can return (read from their sources)."""
    import inspect
    names = set()
    for rule in runner.PER_SKILL_RULES:
        src = inspect.getsource(inspect.getmodule(rule))
        names |= set(re.findall(r'"((?:executable|workflow|safety|needs|dedup)\.[a-z_]+)"', src))
    return names | {"dedup.near_duplicate"}


def test_every_rule_the_runner_registers_has_a_reason_in_the_table():
    missing = sorted(n for n in _rule_names_registered() if n not in reasons.RULE_REASONS)
    assert not missing, f"add these to pipeline/filters/reasons.RULE_REASONS: {missing}"
    assert set(reasons.RULE_REASONS.values()) <= set(reasons.REASONS)


def test_reasons_of_the_needs_family():
    assert reasons.reason_of("needs.account") == "needs_account"
    assert reasons.reason_of("needs.saas") == "needs_account"
    assert reasons.reason_of("needs.mcp") == "needs_account"
    assert reasons.reason_of("needs.api_key") == "needs_account"
    assert reasons.reason_of("needs.wallet") == "paid_service"
    assert reasons.reason_of("needs.network_service") == "needs_network_service"
    assert reasons.reason_of("safety.some_new_rule") == "unsafe"      # a family keeps its reason
    assert reasons.reason_of("error.gui") is None                     # a crashed rule says nothing


def test_primary_reason_follows_the_fixed_priority_and_failures_beat_warnings():
    fired = [("workflow.steps", "fail"), ("needs.account", "fail"), ("executable.binaries", "warn")]
    assert reasons.primary_reason(fired) == "needs_account"          # an outside need before no workflow
    assert reasons.primary_reason(fired + [("executable.gui", "fail")]) == "gui"
    assert reasons.primary_reason(fired + [("safety.destructive", "fail")]) == "unsafe"
    assert reasons.primary_reason([("needs.api_key", "warn"), ("executable.os", "pass")]) == "needs_account"
    assert reasons.primary_reason([("executable.os", "pass")]) is None
    # the server a key opens is the cause, not the key
    assert reasons.primary_reason([("needs.api_key", "fail"), ("needs.network_service", "fail")]) == \
        "needs_network_service"
    verdict = FilterVerdict(skill_id="s", rule="executable.paid_service", outcome="fail", evidence="x")
    assert reasons.primary_reason([verdict, ("needs.network_service", "fail")]) == "paid_service"


def test_a_duplicate_that_is_also_unfit_shows_what_is_unfit():
    assert reasons.primary_reason([("dedup.near_duplicate", "fail"), ("workflow.steps", "fail")]) == "no_workflow"
    assert reasons.primary_reason([("dedup.near_duplicate", "fail"), ("needs.account", "fail")]) == "needs_account"
    assert reasons.primary_reason([("dedup.near_duplicate", "fail"), ("executable.os", "pass")]) == "duplicate"
    assert reasons.primary_reason([("dedup.near_duplicate", "fail"), ("safety.destructive", "fail")]) == "unsafe"
