"""Skills page through AppTest: filter, detail, stage, edit, save, undo."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.pages.apptest_helpers import frame
from workbench.config import REPO_ROOT
from workbench.store import curation
from workbench.store import skills as skill_store

PAGE = str(REPO_ROOT / "pages" / "skills.py")


def _open(ws, monkeypatch):
    monkeypatch.setenv("WORKBENCH_HOME", str(ws.root))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def _shown(at) -> int:
    text = next(m.value for m in at.markdown if m.value.startswith("**") and " of " in m.value)
    return int(text.strip("*").split()[0])


def test_search_and_filters_narrow_the_table(demo_workspace, monkeypatch):
    at = _open(demo_workspace, monkeypatch)
    total = len(skill_store.skills_table(demo_workspace.db))
    assert _shown(at) == total
    at.text_input(key="q").input("git").run()
    n_git = _shown(at)
    assert 0 < n_git < total
    assert all("git" in (r["name"] + r["description"]).lower() for _, r in frame(at, "name", "flagged_rules").iterrows())
    at.text_input(key="q").input("").run()
    at.pills(key="f_status").select("rejected").run()
    rejected = frame(at, "name", "flagged_rules")
    assert len(rejected) == _shown(at) > 0 and set(rejected["status"]) == {"rejected"}


def test_the_table_shows_why_each_skill_is_not_accepted_and_filters_by_it(demo_workspace, monkeypatch):
    """The skills export named each rejection's reason (gui, unsafe, duplicate, ...) but the
    page only listed rule names: the reason a person curates by was nowhere to see or filter."""
    from workbench.cli_export import current_skill_rows
    exported = {r.id: r.reason for r in current_skill_rows(demo_workspace)}
    at = _open(demo_workspace, monkeypatch)
    table = frame(at, "id", "reason", "status")
    assert table["reason"].notna().sum() > 0
    assert table.loc[table["status"] == "accepted", "reason"].isna().all()
    not_accepted = table[table["status"] != "accepted"]
    assert not_accepted["reason"].tolist() == [exported[i] for i in not_accepted["id"]]   # the export's reason
    options = at.multiselect(key="f_reason").options
    assert "unsafe" in options and "duplicate" in options
    at.multiselect(key="f_reason").select("unsafe").run()
    unsafe = frame(at, "id", "reason", "status")
    assert len(unsafe) == _shown(at) > 0 and set(unsafe["reason"]) == {"unsafe"}
    assert sorted(unsafe["id"]) == sorted(i for i, r in exported.items() if r == "unsafe")


def test_the_table_puts_pending_and_low_confidence_skills_first_with_their_confidence(demo_workspace, monkeypatch):
    """Issue 25: the Skills page sorts the pending and low-confidence ones first for a person."""
    at = _open(demo_workspace, monkeypatch)
    table = frame(at, "id", "status", "confidence")
    assert table["confidence"].between(0, 1).all()
    pending = int((table["status"] == "pending").sum())
    assert pending and (table["status"].iloc[:pending] == "pending").all()
    curated = skill_store.skills_table(demo_workspace.db).set_index("id")["curated"]
    rest = table.iloc[pending:]
    low = (rest["confidence"] < 0.5) & ~rest["id"].map(curated).astype(bool)
    # the filters' least sure verdicts next, then the rest, the least sure first
    key = list(zip(~low, rest["confidence"]))
    assert key == sorted(key)


def test_detail_shows_parsed_fields_raw_text_and_evidence(demo_workspace, monkeypatch):
    at = _open(demo_workspace, monkeypatch)
    at.pills(key="f_status").select("rejected").run()
    sid = at.selectbox(key="detail_skill").value
    detail = skill_store.skill_detail(demo_workspace.db, sid)
    assert any(detail["raw_text"][:50] in c.value for c in at.code)
    evidence = frame(at, "rule", "outcome", "evidence")
    assert (evidence["outcome"] == "fail").any()
    assert evidence.iloc[0]["evidence"]


def test_reject_edit_save_and_undo(demo_workspace, monkeypatch):
    at = _open(demo_workspace, monkeypatch)
    at.text_input(key="q").input("git").run()
    shown = frame(at, "id", "status")
    sid = shown.loc[shown["status"] == "accepted", "id"].iloc[0]  # pending ones come first: pick an accepted one
    at.selectbox(key="detail_skill").set_value(sid).run()
    before = skill_store.skill_detail(demo_workspace.db, sid)
    assert before["status"] == "accepted"
    assert any(c.value == "Nothing staged for this skill." for c in at.caption)
    at.button(key="stage_reject").click().run()
    assert len(frame(at, "skill", "field", "new value")) == 1
    # next to the buttons, not only in the table further down
    assert any(w.value.startswith("Staged, not saved yet: status → rejected.") for w in at.warning)
    # an edit of the description through the form, staged in the same batch
    # a form sends its values with the submit click, in one run
    at.text_area[0].input("Edited by the curator.")
    next(b for b in at.button if b.label == "Stage edits").click().run()
    assert len(frame(at, "skill", "field", "new value")) == 2
    assert any(w.value.startswith("Staged, not saved yet: status → rejected · description edited.")
               for w in at.warning)
    at.text_input(key="author").input("curator-ann").run()
    at.button(key="save").click().run()
    assert not at.exception
    after = skill_store.skill_detail(demo_workspace.db, sid)
    assert after["status"] == "rejected" and after["description"] == "Edited by the curator."
    hist = curation.recent_batches(demo_workspace.db)
    assert hist.iloc[0]["author"] == "curator-ann" and hist.iloc[0]["changes"] == 2
    assert any("Saved batch" in s.value for s in at.success)
    assert any(c.value == "Nothing staged for this skill." for c in at.caption)
    # the graph still holds the skill until it is built again
    assert any(i.value == "1 skill(s) no longer accepted: the graph keeps them until "
               f"`workbench graph build --workspace {demo_workspace.root}` runs again." for i in at.info)
    # undo the batch just saved (the default pick is the newest)
    at.button(key="undo").click().run()
    restored = skill_store.skill_detail(demo_workspace.db, sid)
    assert restored["status"] == "accepted" and restored["description"] == before["description"]
    assert bool(curation.recent_batches(demo_workspace.db).iloc[1]["undone"])


def test_bulk_stage_and_discard(demo_workspace, monkeypatch):
    at = _open(demo_workspace, monkeypatch)
    at.text_input(key="q").input("tar").run()
    n = _shown(at)
    at.selectbox(key="bulk_status").select("pending").run()
    at.button(key="bulk_stage").click().run()
    assert len(frame(at, "skill", "field", "new value")) == n
    at.button(key="discard").click().run()
    assert "No staged changes." in [m.value for m in at.markdown]


def test_clicking_a_row_opens_its_detail(demo_workspace, monkeypatch):
    at = _open(demo_workspace, monkeypatch)
    shown = frame(at, "name", "flagged_rules")
    at.session_state["skills_table"] = {"selection": {"rows": [5], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    name = shown.iloc[5]["name"]
    assert at.selectbox(key="detail_skill").value == shown.iloc[5]["id"]
    assert any(m.value.startswith(f"### {name}") for m in at.markdown)


def test_a_rejected_skill_says_how_it_gets_scenarios_and_accepting_it_says_what_to_run(demo_workspace,
                                                                                      monkeypatch):
    ws = demo_workspace
    at = _open(ws, monkeypatch)
    at.pills(key="f_status").set_value(["rejected"]).run()
    sid = at.selectbox(key="detail_skill").value
    skill = skill_store.skill_detail(ws.db, sid)
    infer = f"`workbench scenarios infer --workspace {ws.root}`"
    build = f"`workbench graph build --workspace {ws.root}`"
    assert any(i.value == "No scenarios: inference covers accepted skills only, and this skill is rejected. "
               f"Accept it and save, then run {infer} and {build}." for i in at.info)
    # found by its key (no status filter), accepted and saved
    at.pills(key="f_status").set_value([]).run()
    at.text_input(key="q").input(skill["skill_key"]).run()
    at.selectbox(key="detail_skill").set_value(sid).run()
    at.button(key="stage_accept").click().run()
    at.button(key="save").click().run()
    assert not at.exception, at.exception
    assert skill_store.skill_detail(ws.db, sid)["status"] == "accepted"
    assert any(i.value == f"1 skill(s) newly accepted: run {infer} to infer their scenarios, "
               f"then {build} to add them to the graph." for i in at.info)
    picker = at.selectbox(key="detail_skill")
    assert picker.value == sid and f"{skill['name']} · {skill['category']} · accepted" in picker.options
    assert any(i.value == f"No scenarios yet: run {infer}, then {build}." for i in at.info)
