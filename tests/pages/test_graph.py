"""Graph page through AppTest on the demo graph workspace: statistics, the cluster graph, the
ego network, stepping through a sampled path; and what every graph page says on an empty workspace."""
from __future__ import annotations

import json

from analysis import cluster_graph as cg
from analysis import graph_health as gh
from analysis import scenario_map as sm
from pipeline.graph.assemble import assemble, graph_stats
from tests.pages.apptest_helpers import frame, metric, open_page
from workbench.store import graph as store


def _iframes(at) -> list[str]:
    return [el.proto.srcdoc for el in at.get("iframe")]


def test_graph_page_shows_stats_and_renders_html(graph_workspace, monkeypatch):
    ws = graph_workspace
    at = open_page(ws, monkeypatch, "graph.py")
    stats = graph_stats(assemble(ws.db))
    assert metric(at, "Clusters (nodes)") == str(stats["nodes"])
    assert metric(at, "Skill edges") == str(stats["skill_edges"])
    assert metric(at, "Bridge edges") == str(stats["bridge_edges"])
    assert metric(at, "Transitions") == str(stats["transitions"])
    pages = _iframes(at)
    assert len(pages) == 3  # meta-graph, ego network, path
    meta = pages[0]
    assert "new vis.Network" in meta and '"enabled": false' in meta.replace("False", "false")
    nodes = json.loads(meta.split("nodes = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    assert 0 < len(nodes) <= 500 and all("x" in n and "y" in n for n in nodes)
    # short labels (longer only to keep apart texts cut alike); the hover has the text
    assert all(len(n["label"]) <= cg.DISTINCT_LABEL_CHARS for n in nodes)
    shown = {n["label"] for n in nodes if n["label"].strip()}
    for lab in shown:  # different texts never share a label
        assert len({n["title"].split("\n(cluster", 1)[0] for n in nodes if n["label"] == lab}) == 1, lab
    assert any(n["label"].strip() for n in nodes)
    assert any(f"Showing {len(nodes):,} of {stats['nodes']:,} clusters" in c.value for c in at.caption)
    # the ego network of the picked cluster (highest degree first) holds at most 150 nodes
    ego = json.loads(pages[1].split("nodes = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    assert 1 <= len(ego) <= 150
    at.radio(key="ego_hops").set_value(1).run()
    ego1 = json.loads(_iframes(at)[1].split("nodes = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    assert len(ego1) <= len(ego)


def test_graph_page_health_card_shows_the_figures_their_targets_and_advice(graph_workspace, monkeypatch):
    ws = graph_workspace
    at = open_page(ws, monkeypatch, "graph.py")
    h = gh.measure(assemble(ws.db))
    marks = [m.value for m in at.markdown if m.value.startswith((":green[", ":red["))]
    for item in gh.card(h):
        assert metric(at, item.label) == item.value
        if item.ok is not None:   # each target beside its figure, green when met, red when missed
            colour, sign = ("green", "✓") if item.ok else ("red", "✗")
            assert f":{colour}[{sign} target {item.target}]" in marks, (item, marks)
    assert len(marks) == len(gh.TARGETS)
    tips = gh.advice(h)
    if tips:   # advice under a summary when a target is missed, else the summary alone
        warning = next(w.value for w in at.warning if gh.summary(h) in w.value)
        assert all(t in warning for t in tips)
    else:
        assert any(s.value == gh.summary(h) for s in at.success)
    assert any(f"of {h.sample_paths} fresh inverse-frequency paths" in c.value for c in at.caption)


def test_graph_page_picker_reaches_every_cluster_and_says_how(graph_workspace, monkeypatch):
    ws = graph_workspace
    monkeypatch.setattr(sm, "PICKER_LIMIT", 20)
    at = open_page(ws, monkeypatch, "graph.py")
    n = graph_stats(assemble(ws.db))["nodes"]
    assert len(at.selectbox(key="ego_pick").options) == 20
    assert any(f"The list holds the 20 best-connected clusters of {n:,}" in c.value for c in at.caption)
    clusters = store.clusters_table(ws.db)
    last = clusters.iloc[-1]  # (the picker's order is by neighbours; this one is found by its text)
    at.text_input(key="ego_query").input(last["canonical"]).run()
    pick = at.selectbox(key="ego_pick")
    assert any(last["canonical"][:40] in o for o in pick.options)
    assert any("clusters contain" in c.value for c in at.caption)
    pick.set_value(last["anchor"]).run()
    assert not at.exception
    assert at.selectbox(key="ego_pick").value == last["anchor"]


def test_graph_page_steps_through_a_sampled_path(graph_workspace, monkeypatch):
    ws = graph_workspace
    at = open_page(ws, monkeypatch, "graph.py")
    batch = at.selectbox(key="path_batch").value
    steps = store.path_steps(ws.db, batch)
    idx = int(steps.groupby("idx")["step"].max().idxmax())  # a path with the most steps
    n = int(steps[steps["idx"] == idx]["step"].max()) + 1
    assert n >= 2
    at.number_input(key="path_idx").set_value(idx).run()
    assert not at.exception
    table = frame(at, "now", "step", "from", "skill", "to")
    assert len(table) == n and table["now"].tolist()[-1] == "▶"
    at.slider(key=f"path_step_{batch}_{idx}").set_value(0).run()
    table = frame(at, "now", "step", "from", "skill", "to")
    assert table["now"].tolist()[0] == "▶" and table["now"].tolist().count("▶") == 1
    drawn = json.loads(_iframes(at)[2].split("edges = new vis.DataSet(", 1)[1].split(");\n", 1)[0])
    assert len(drawn) == 1  # only step 0 drawn
    assert drawn[0]["label"].startswith("0. ")


def test_pages_say_what_to_run_on_an_empty_workspace(workspace, monkeypatch):
    for page in ("scenarios.py", "graph.py", "path_coverage.py"):
        at = open_page(workspace, monkeypatch, page)
        assert at.info, page


def test_graph_page_uses_no_deprecated_streamlit_call(graph_workspace, monkeypatch):
    """st.components.v1.html is past its removal date (2026-06-01): the page draws with st.iframe,
    and Streamlit logs no deprecation warning for it."""
    import logging

    from streamlit import deprecation_util
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    deprecation_util._LOGGER.addHandler(handler)
    try:
        at = open_page(graph_workspace, monkeypatch, "graph.py")
    finally:
        deprecation_util._LOGGER.removeHandler(handler)
    assert len(at.get("iframe")) >= 2
    assert not [m for m in seen if "will be removed" in m], seen
