"""Scenarios: the UMAP map of scenarios; lasso-merge clusters, rename, split, undo."""
import streamlit as st

from analysis import scenario_map as sm
from analysis.display import short
from pages import cached
from pages.shared import provider_note, scenario_graph_or_stop, workspace
from pipeline.graph import edits
from workbench.config import default_author

ws = workspace()
st.title("Scenarios")
st.caption(provider_note())

build, clusters = scenario_graph_or_stop(ws)
members = cached.members_table(ws)

# Elements shown only now and then sit in slots that are always drawn: when an element comes or
# goes, every later one moves, and the browser redraws the tabs below with the first one open
# (picking scenarios to split right after an edit jumped back to the Rename tab).
flash = st.empty()
if msg := st.session_state.pop("flash", None):
    flash.success(msg)
st.caption(f"{len(clusters):,} clusters from {len(members):,} scenarios · last build "
           f"{build['finished_at']:%Y-%m-%d %H:%M} · edits rebuild the graph and survive later builds.")


def _edit(label: str, fn, *args, focus: str | None = None) -> None:
    """Run one cluster edit (it rebuilds the graph), then rerun the app with a message."""
    try:
        with st.spinner(f"{label}: rebuilding the graph…"):
            fn(ws, *args)
    except ValueError as exc:
        st.error(str(exc))
        return
    st.session_state["flash"] = f"{label}: done."
    if focus:
        st.session_state["_focus_scenario"] = focus
    st.rerun()


# --- which cluster is picked (by anchor: cluster ids are renumbered by every rebuild) -----------
if focus := st.session_state.pop("_focus_scenario", None):
    anchor = sm.anchor_of_scenario(members, clusters, focus)
    if anchor:
        st.session_state["cluster_pick"] = anchor
labels = cached.cluster_labels(ws)
if st.session_state.get("cluster_pick") not in labels:
    st.session_state.pop("cluster_pick", None)

author = st.sidebar.text_input("Your name (recorded with each edit)", value=default_author(), key="author")
author = author.strip() or default_author()

p1, p2 = st.columns([3, 1])
query = p2.text_input("Filter clusters", key="cluster_query", placeholder="words in the canonical text")
options = sm.cluster_options(clusters, query, keep=st.session_state.get("cluster_pick"))
if not options:
    p1.warning(f"No cluster's text contains “{query}”.")
    query = ""
    options = sm.cluster_options(clusters, query, keep=st.session_state.get("cluster_pick"))
pick = p1.selectbox("Cluster (size · canonical text)", options, format_func=labels.get, key="cluster_pick")
p1.caption(sm.picker_note(clusters, query))
cid = sm.cluster_ids(clusters, [pick])[0]

# --- the map -----------------------------------------------------------------------------------
st.subheader("Map")
m1, m2 = st.columns([2, 3])
mode = m1.radio("Colour by", ["topic", "cluster"], horizontal=True, key="color_mode",
                format_func={"topic": "HDBSCAN topic", "cluster": "picked dedup cluster"}.get)
points = sm.map_points(members, selected_cluster=cid)
shown = f"{len(points):,} of {len(members):,} scenarios drawn"
if len(points) < members["x"].notna().sum():
    shown += " (a fixed sample; the picked cluster always included)"
m2.caption(f"{shown}. Lasso or box-select points to merge their clusters; double-click clears.")
event = st.plotly_chart(sm.scenario_map(points, color_by=mode, selected_cluster=cid), key="scenario_map",
                        on_select="rerun", selection_mode=("lasso", "box"), width="stretch")
chosen = sm.selected_clusters(event if event is not None else st.session_state.get("scenario_map"), members)


def _forget_merge() -> None:
    st.session_state.pop("merge_anchors", None)
    st.session_state.pop("merge_sure", None)  # a merge opened again is confirmed again


@st.dialog("Merge clusters", width="large", on_dismiss=_forget_merge)
def merge_dialog(anchors: list[str]) -> None:
    ids = sm.cluster_ids(clusters, anchors)
    if len(ids) < 2:
        st.warning("The graph changed since the selection; select the points again.")
        if st.button("Close", key="merge_close"):
            _forget_merge()
            st.rerun()
        return
    preview = sm.merge_preview(clusters, ids)
    scope = sm.merge_scope(members, ids)
    st.write(scope.summary())
    if scope.ask_again:
        st.warning(scope.warning())
    st.dataframe(preview, hide_index=True, width="stretch", key="merge_preview",
                 column_config={"cluster_id": st.column_config.NumberColumn("cluster", width="small"),
                                "size": st.column_config.NumberColumn(width="small"),
                                "canonical": st.column_config.TextColumn("canonical text", width="large")})
    st.caption(f"Recorded as an edit by {author}; the graph is rebuilt.")
    sure = not scope.ask_again or st.checkbox(f"Yes, merge all {scope.clusters} clusters into one",
                                              key="merge_sure")
    c1, c2 = st.columns(2)
    if c1.button(f"Merge {len(ids)} clusters", type="primary", key="merge_confirm", disabled=not sure):
        _forget_merge()
        focus = clusters.set_index("cluster_id").loc[ids[0], "anchor"]
        _edit(f"Merged {len(ids)} clusters", edits.merge, ids, author, focus=focus)
        st.session_state["merge_anchors"] = anchors  # reached only when the merge failed: keep it open
    if c2.button("Cancel", key="merge_cancel"):
        _forget_merge()
        st.rerun()


s1, s2 = st.columns([1, 3])
if len(chosen) >= 2:
    if s1.button(f"Merge {len(chosen)} clusters", type="primary", key="merge_open"):
        st.session_state["merge_anchors"] = clusters.set_index("cluster_id").loc[chosen, "anchor"].tolist()
    n_topics = len(sm.merge_scope(members, chosen).topics)
    s2.caption(f"Selection: {len(sm.selection_points(event))} points in {len(chosen)} dedup clusters "
               f"from {n_topics} topic(s).")
elif chosen:
    s2.caption("The selection lies in one cluster; select points of two or more to merge.")
with st.container():  # the dialog's slot
    if st.session_state.get("merge_anchors"):
        merge_dialog(st.session_state["merge_anchors"])

# --- the picked cluster ---------------------------------------------------------------------------
row = clusters.set_index("cluster_id").loc[cid]
st.subheader(f"Cluster {cid}" + (" (renamed)" if row["renamed"] else ""))
st.markdown(f"**{row['canonical']}**  \n{int(row['size'])} scenario(s) · anchor `{row['anchor']}`")
mem = sm.cluster_members(members, cid)
st.dataframe(mem, hide_index=True, width="stretch", key="cluster_members",
             column_config={"scenario_id": None, "text": st.column_config.TextColumn("text", width="large")})

t_rename, t_split = st.tabs(["Rename", "Split"])
with t_rename:
    with st.form(key="rename_form"):
        # the key follows the text, so that the box shows the current text after a rename or an undo
        new_text = st.text_input("Canonical text", value=row["canonical"],
                                 key=f"rename_text_{pick}_{abs(hash(row['canonical']))}")
        if st.form_submit_button("Rename"):
            if new_text.strip() == row["canonical"]:
                st.info("The text is unchanged.")
            else:
                _edit("Renamed the cluster", edits.rename, cid, new_text, author, focus=row["anchor"])
with t_split:
    if len(mem) < 2:
        st.write("A cluster of one scenario cannot be split.")
    else:
        texts = dict(zip(mem["scenario_id"], mem["skill"] + " · " + mem["role"] + " · " + mem["text"].map(short)))
        moved = st.multiselect("Scenarios to move into a cluster of their own", mem["scenario_id"].tolist(),
                               format_func=texts.get, key=f"split_pick_{pick}")
        ok = 0 < len(moved) < len(mem)
        if st.button(f"Split off {len(moved)} scenario(s)", key="split", disabled=not ok):
            stay = next(s for s in mem["scenario_id"] if s not in set(moved))
            _edit(f"Split {len(moved)} scenario(s) off", edits.split, cid, moved, author, focus=stay)

# --- history and undo -----------------------------------------------------------------------------
st.subheader("Edit history")
history = sm.edit_history_view(cached.edit_history(ws))
u1, u2 = st.columns([1, 4])
active = history[~history["undone"]]
if u1.button("Undo last edit", key="undo", disabled=active.empty):
    _edit(f"Undid “{active.iloc[0]['what']}”", edits.undo, focus=row["anchor"])
if active.empty:
    u2.caption("No edit to undo.")
else:
    u2.caption(f"Undo would revert: {active.iloc[0]['kind']} — {active.iloc[0]['what']}")
if history.empty:
    st.write("No cluster edits yet.")
else:
    st.dataframe(history, hide_index=True, width="stretch", key="edit_history",
                 column_config={"edit_id": None, "what": st.column_config.TextColumn(width="large")})
