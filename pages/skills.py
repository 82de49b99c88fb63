"""Skills: search and filter, inspect one skill, stage accept / reject / edits, save, undo."""
import pandas as pd
import streamlit as st

from analysis import skills_view
from pages import cached
from pages.shared import keep_picked, open_clicked_row, provider_note, workspace
from pipeline.taxonomy import CATEGORIES
from workbench.config import default_author
from workbench.models import CurationChange
from workbench.store import curation

ws = workspace()
st.title("Skills")
st.caption(provider_note())
staged: dict[tuple[str, str], str] = st.session_state.setdefault("staged", {})

table = skills_view.with_reasons(skills_view.with_source_labels(cached.skills_table(ws)), cached.skill_reasons(ws))
table = skills_view.review_order(skills_view.with_confidence(table, cached.deciding_verdicts(ws)))
if table.empty:
    st.info("No skills in this workspace yet. Run `workbench ingest PATH`.")
    st.stop()

# --- filters ---------------------------------------------------------------
# Two rows, and pills for the status: in five narrow columns the chips were cut ("cted").
c1, c2 = st.columns([3, 2])
query = c1.text_input("Search", key="q", placeholder="name, description or path")
stats = c2.pills("Status", ["accepted", "pending", "rejected"], selection_mode="multi", key="f_status")
c3, c4 = st.columns(2)
cats = c3.multiselect("Category", sorted(table["category"].unique()), key="f_cat")
srcs = c4.multiselect("Source", sorted(table["source"].unique()), key="f_source")
c5, c6 = st.columns(2)
all_rules = sorted({r for rs in table["flagged_rules"] for r in (rs if rs is not None else [])})
rules = c5.multiselect("Flagged by", all_rules, key="f_rule")
reasons = c6.multiselect("Reason (not accepted because)", sorted(table["reason"].dropna().unique()), key="f_reason")
shown = skills_view.filter_skills(
    table, skills_view.SkillFilter(query, tuple(cats), tuple(stats), tuple(srcs), tuple(rules), tuple(reasons)))
st.markdown(f"**{len(shown)} of {len(table)} skills**")
st.caption("Pending skills first, then those the filters were least sure of (low confidence, not yet decided "
           "by a person), then the rest; the least sure first.")
view = shown[["name", "category", "status", "confidence", "reason", "flagged_rules", "source", "n_steps",
              "description", "id"]]
picked = st.dataframe(view, hide_index=True, width="stretch", height=320, key="skills_table",
                      on_select="rerun", selection_mode="single-row",
                      column_config={"flagged_rules": st.column_config.ListColumn("flagged"),
                                     "confidence": st.column_config.ProgressColumn(
                                         "confidence", min_value=0.0, max_value=1.0, format="%.2f",
                                         help="How sure the filters' verdict is, from the rules that decided it"),
                                     "n_steps": st.column_config.NumberColumn("steps"),
                                     "id": None})
open_clicked_row(picked, view, "id", "detail_skill")

# --- bulk ------------------------------------------------------------------
with st.expander(f"Set the status of all {len(shown)} shown skills"):
    b1, b2 = st.columns([2, 1])
    bulk_status = b1.selectbox("New status", ["accepted", "rejected", "pending"], key="bulk_status")
    if b2.button(f"Stage for {len(shown)} skills", key="bulk_stage", disabled=shown.empty):
        for sid in shown["id"]:
            staged[(sid, "status")] = bulk_status
        st.rerun()

# --- detail ----------------------------------------------------------------
st.subheader("Detail")
if shown.empty:
    st.write("No skill matches the filters.")
else:
    ids = shown["id"].tolist()
    labels = dict(zip(shown["id"], shown["name"] + " · " + shown["category"] + " · " + shown["status"]))
    keep_picked("detail_skill", labels)  # a save changes the status in a label
    sid = st.selectbox("Skill", ids, format_func=lambda i: labels[i], key="detail_skill")
    d = cached.skill_detail(ws, sid)
    st.markdown(f"### {d['name']}  \n`{d['skill_key']}` · version {d['version']} · "
                f"status **{d['status']}** (filters said {d['auto_status']})")
    a1, a2, a3, a4 = st.columns([1, 1, 1, 3])
    if a1.button("Accept", key="stage_accept"):
        staged[(sid, "status")] = "accepted"
        st.rerun()
    if a2.button("Reject", key="stage_reject"):
        staged[(sid, "status")] = "rejected"
        st.rerun()
    if a3.button("Back to pending", key="stage_pending"):
        staged[(sid, "status")] = "pending"
        st.rerun()
    if note := skills_view.staged_note(staged, sid):
        a4.warning(f"Staged, not saved yet: {note}. Save under Changes below.", icon=":material/edit_note:")
    else:
        a4.caption("Nothing staged for this skill.")
    tab_fields, tab_scen, tab_raw, tab_evidence, tab_edit = st.tabs(
        ["Parsed", "Scenarios", "SKILL.md", "Filter evidence", "Edit"])
    with tab_fields:
        st.write(d["description"])
        st.json({k: d[k] for k in ("category", "category_inferred", "steps", "tools", "bins", "env_vars",
                                   "inputs", "outputs", "os", "license", "skill_version",
                                   "source_kind", "source_path", "source_ref", "package_files")},
                expanded=False)
    with tab_scen:
        scen = cached.scenarios_for(ws, sid)
        failure = cached.failure_for(ws, sid)
        if failure:
            st.error(f"Inference failed ({failure['provider']} / {failure['model']}): {failure['reason']}")
        if scen.empty:
            st.info(skills_view.missing_scenarios_note(d["status"], str(ws.root)))
        else:
            st.caption(f"Inferred by {scen.iloc[0]['provider']} · {scen.iloc[0]['model']}")
            st.dataframe(scen.set_index("role").drop(columns=["provider", "model", "template_version",
                                                              "created_at"]).T, width="stretch", key="scenarios")
    with tab_raw:
        st.code(d["raw_text"], language="markdown")
    with tab_evidence:
        st.dataframe(d["verdicts"], hide_index=True, width="stretch", key="evidence")
    with tab_edit:
        with st.form(key="edit_form"):
            cats_all = sorted(set(CATEGORIES) | set(table["category"]))
            new_name = st.text_input("Name", value=d["name"])
            new_cat = st.selectbox("Category", cats_all, index=cats_all.index(d["category"]))
            new_desc = st.text_area("Description", value=d["description"])
            if st.form_submit_button("Stage edits"):
                for field, value in (("name", new_name), ("category", new_cat), ("description", new_desc)):
                    if value != d[field]:
                        staged[(sid, field)] = value
                st.rerun()

# --- staged changes, save, undo -----------------------------------------------
st.subheader("Changes")
if staged:
    names = dict(zip(table["id"], table["name"]))
    st.dataframe(pd.DataFrame([{"skill": names.get(s, s), "field": f, "new value": v}
                               for (s, f), v in staged.items()]), hide_index=True, key="staged_table")
    author = st.text_input("Your name", value=default_author(), key="author")
    s1, s2 = st.columns([1, 1])
    if s1.button(f"Save {len(staged)} change(s)", type="primary", key="save"):
        changes = [CurationChange(skill_id=s, field=f, new_value=v) for (s, f), v in staged.items()]
        old_status = dict(zip(table["id"], table["status"]))
        try:
            batch = curation.save_changes(ws.db, changes, author or default_author())
        except curation.CurationError as exc:
            st.error(str(exc))
        else:
            staged.clear()
            st.session_state["flash"] = f"Saved batch {batch}." if batch else "Nothing changed."
            st.session_state["flash_next"] = skills_view.followup_after_save(
                old_status, {c.skill_id: c.new_value for c in changes if c.field == "status"}, str(ws.root))
            st.rerun()
    if s2.button("Discard", key="discard"):
        staged.clear()
        st.rerun()
else:
    st.write("No staged changes.")
if msg := st.session_state.pop("flash", None):
    st.success(msg)
if msg := st.session_state.pop("flash_next", None):
    st.info(msg, icon=":material/sync_problem:")

batches = cached.recent_batches(ws)
if not batches.empty:
    st.markdown("**Recent changes**")
    st.dataframe(batches[["at", "author", "changes", "summary", "undone", "undoes_batch"]],
                 hide_index=True, width="stretch", key="history")
    undoable = batches[~batches["undone"]]["batch_id"].tolist()
    if undoable:
        u1, u2 = st.columns([2, 1])
        pick = u1.selectbox("Batch to undo", undoable, key="undo_pick",
                            format_func=lambda b: f"{b} — " + batches.set_index("batch_id").loc[b, "summary"][:80])
        if u2.button("Undo", key="undo"):
            try:
                curation.undo_batch(ws.db, pick, st.session_state.get("author") or default_author())
            except curation.CurationError as exc:
                st.error(str(exc))
            else:
                st.session_state["flash"] = f"Undid batch {pick}."
                st.rerun()
