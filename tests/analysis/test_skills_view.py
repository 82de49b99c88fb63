"""Filtering and summaries of the skills table."""
from __future__ import annotations

import pandas as pd

from analysis import skills_view


def _table():
    return skills_view.with_source_labels(pd.DataFrame([
        {"name": "git-bisect", "description": "Find a bad commit", "skill_key": "git/git-bisect", "category": "git",
         "status": "accepted", "flagged_rules": [], "source_kind": "folder", "source_path": "/c/git/git-bisect"},
        {"name": "wipe", "description": "Reset everything", "skill_key": "sys/wipe", "category": "system-administration",
         "status": "rejected", "flagged_rules": ["safety.destructive"], "source_kind": "folder",
         "source_path": "/c/sys/wipe"},
        {"name": "jq-filter", "description": "Filter JSON", "skill_key": "export.jsonl#jq-filter",
         "category": "data-processing", "status": "pending", "flagged_rules": ["executable.binaries"],
         "source_kind": "jsonl", "source_path": "/c/export.jsonl#L1"},
    ]))


def test_filters_combine():
    t = _table()
    f = skills_view.SkillFilter
    assert list(skills_view.filter_skills(t, f(query="bad commit"))["name"]) == ["git-bisect"]
    assert list(skills_view.filter_skills(t, f(statuses=("rejected",)))["name"]) == ["wipe"]
    assert list(skills_view.filter_skills(t, f(sources=("jsonl:export.jsonl",)))["name"]) == ["jq-filter"]
    assert list(skills_view.filter_skills(t, f(rules=("safety.destructive",)))["name"]) == ["wipe"]
    assert skills_view.filter_skills(t, f(query="json", statuses=("accepted",))).empty


def test_reasons_name_why_a_skill_is_not_accepted_and_filter_it():
    t = _table().assign(id=["a", "w", "j"])
    # an accepted skill shows no reason even where its rules gave one (a person accepted it)
    t = skills_view.with_reasons(t, {"a": "duplicate", "w": "unsafe", "j": "os"})
    assert t["reason"].isna().tolist() == [True, False, False] and t["reason"].tolist()[1:] == ["unsafe", "os"]
    f = skills_view.SkillFilter
    assert list(skills_view.filter_skills(t, f(reasons=("unsafe",)))["name"]) == ["wipe"]
    assert list(skills_view.filter_skills(t, f(reasons=("unsafe", "os")))["name"]) == ["wipe", "jq-filter"]
    assert len(skills_view.filter_skills(t, f())) == 3


def test_review_order_puts_pending_then_low_confidence_skills_first_with_their_confidence():
    # issue 25: "the Skills page sorts the pending and low-confidence ones first for a person"
    t = pd.DataFrame({"id": list("abcdef"), "name": ["a-ok", "b-gui", "c-warned", "d-steps", "e-judged", "f-mine"],
                      "status": ["accepted", "rejected", "pending", "rejected", "accepted", "rejected"],
                      "curated": [False, False, False, False, False, True]})
    verdicts = pd.DataFrame([
        {"skill_id": "b", "rule": "executable.gui", "outcome": "fail", "evidence": "opens a window"},
        {"skill_id": "c", "rule": "needs.saas", "outcome": "warn", "evidence": "names a hosted product"},
        {"skill_id": "d", "rule": "workflow.steps", "outcome": "fail", "evidence": "one step"},
        {"skill_id": "e", "rule": "judge.llm", "outcome": "pass", "evidence": "terminal work; confidence=0.4"},
        {"skill_id": "f", "rule": "workflow.steps", "outcome": "fail", "evidence": "one step"}])
    scored = skills_view.with_confidence(t, verdicts).set_index("id")
    assert scored["confidence"].to_dict() == {"a": 0.75, "b": 0.85, "c": 0.3, "d": 0.55, "e": 0.4, "f": 0.55}
    assert scored.loc["e", "confidence_band"] == "low" and scored.loc["b", "confidence_band"] == "high"
    ordered = skills_view.review_order(skills_view.with_confidence(t, verdicts))
    # pending; the filters' low-confidence verdict; then the rest, least sure first (f: a person decided)
    assert ordered["id"].tolist() == ["c", "e", "d", "f", "a", "b"]
    assert ordered["review"].tolist() == ["pending", "low confidence"] + ["decided"] * 4


def test_summaries():
    t = _table()
    counts = skills_view.status_by_category(t)
    assert counts["skills"].sum() == 3
    rules = skills_view.rule_counts(t).set_index("rule")["skills"].to_dict()
    assert rules == {"safety.destructive": 1, "executable.binaries": 1}


def test_staged_note_names_what_one_skill_has_staged():
    staged = {("a", "status"): "rejected", ("a", "description"): "new text", ("b", "status"): "accepted"}
    assert skills_view.staged_note(staged, "a") == "status → rejected · description edited"
    assert skills_view.staged_note(staged, "c") == ""


def test_a_save_says_what_the_pipeline_needs_next():
    old = {"a": "pending", "b": "accepted", "c": "accepted", "d": "rejected"}
    note = skills_view.followup_after_save(old, {"a": "accepted", "b": "rejected", "c": "accepted"}, "/w")
    assert note == ("1 skill(s) newly accepted: run `workbench scenarios infer --workspace /w` to infer their "
                    "scenarios, then `workbench graph build --workspace /w` to add them to the graph. "
                    "1 skill(s) no longer accepted: the graph keeps them until "
                    "`workbench graph build --workspace /w` runs again.")
    assert skills_view.followup_after_save(old, {"d": "pending"}) == ""  # neither side accepted: nothing to redo


def test_missing_scenarios_say_that_inference_covers_accepted_skills_only():
    assert skills_view.missing_scenarios_note("accepted") == \
        "No scenarios yet: run `workbench scenarios infer`, then `workbench graph build`."
    assert skills_view.missing_scenarios_note("rejected").startswith(
        "No scenarios: inference covers accepted skills only, and this skill is rejected. Accept it and save")
