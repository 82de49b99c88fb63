"""Data shaping and figures for the Scenarios page.

The UMAP scenario map (a deterministic sample of at most ``MAX_MAP_POINTS`` points and its
plotly figure), reading lasso / box selections back into scenarios and clusters, the
cluster picker, a cluster's members, the merge preview and the cluster-edit history.
Pure functions of DataFrames: nothing here reads the store or imports Streamlit, so
notebooks can use it too.
"""
from __future__ import annotations

import html as html_mod
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from analysis.display import HIGHLIGHT, short
from analysis.figures import clear_of_toolbar

MAX_MAP_POINTS = 20_000      # drawn points on the scenario map (DESIGN §8: lasso stays usable)
WEBGL_FROM = 2_000           # Scattergl above this many points
REST_COLOR = "#c8c8c8"
TOPIC_PALETTE = px.colors.qualitative.Dark24 + px.colors.qualitative.Light24


def map_points(members: pd.DataFrame, selected_cluster: int | None = None, max_points: int = MAX_MAP_POINTS,
               seed: int = 0) -> pd.DataFrame:
    """The members to draw: those with a projection, at most ``max_points`` of them.

    Beyond the cap a deterministic sample (fixed seed, same input → same points) is drawn,
    and the selected cluster's members are always kept.
    """
    pts = members[members["x"].notna() & members["y"].notna()].reset_index(drop=True)
    if len(pts) <= max_points:
        return pts
    keep = np.zeros(len(pts), dtype=bool)
    if selected_cluster is not None:
        keep |= (pts["cluster_id"] == selected_cluster).to_numpy()
    rest = np.flatnonzero(~keep)
    room = max(0, max_points - int(keep.sum()))
    if room and len(rest):
        rng = np.random.default_rng(seed)
        keep[rng.choice(rest, min(room, len(rest)), replace=False)] = True
    return pts[keep].reset_index(drop=True)


def _hover(points: pd.DataFrame) -> list[str]:
    return [f"<b>{html_mod.escape(short(t, 90))}</b><br>{html_mod.escape(short(s, 50))} · {r}<br>cluster {c}"
            for t, s, r, c in zip(points["text"], points["skill_name"], points["role"], points["cluster_id"])]


def scenario_map(points: pd.DataFrame, color_by: str = "topic", selected_cluster: int | None = None,
                 height: int = 620) -> go.Figure:
    """UMAP scatter of scenarios, one trace per colour; every point carries
    ``customdata = [scenario_id, cluster_id]`` (point indices are per trace)."""
    if color_by not in ("topic", "cluster"):
        raise ValueError("color_by is 'topic' or 'cluster'")
    trace_cls = go.Scattergl if len(points) > WEBGL_FROM else go.Scatter
    fig = go.Figure()
    pts = points.assign(_hover=_hover(points)) if len(points) else points.assign(_hover=[])

    def add(frame: pd.DataFrame, name: str, color: str, size: float, opacity: float) -> None:
        fig.add_trace(trace_cls(
            x=frame["x"], y=frame["y"], mode="markers", name=name,
            marker=dict(color=color, size=size, opacity=opacity, line=dict(width=0)),
            # an array, not nested lists: plotly validates and deep-copies lists item by item (~2 s at 20k points)
            customdata=np.column_stack([frame["scenario_id"].astype(str).to_numpy(),
                                        frame["cluster_id"].astype(int).to_numpy()]) if len(frame) else [],
            text=frame["_hover"], hovertemplate="%{text}<extra></extra>"))

    if color_by == "topic":
        topics = pts["topic"].fillna(-1).astype(int)
        for i, t in enumerate(sorted(topics.unique(), key=lambda t: (t < 0, t))):
            part = pts[topics == t]
            if t < 0:
                add(part, "no topic", REST_COLOR, 5, 0.6)
            else:
                add(part, f"topic {t}", TOPIC_PALETTE[t % len(TOPIC_PALETTE)], 6, 0.8)
    else:
        chosen = (pts["cluster_id"] == selected_cluster) if selected_cluster is not None else \
            pd.Series(False, index=pts.index)
        add(pts[~chosen], "other clusters", REST_COLOR, 5, 0.6)
        if chosen.any():
            add(pts[chosen], f"cluster {selected_cluster}", HIGHLIGHT, 10, 1.0)
    fig.update_layout(height=height, dragmode="lasso", uirevision="scenario_map",
                      margin=dict(l=0, r=0, t=10, b=0), legend=dict(itemsizing="constant", font=dict(size=11)),
                      xaxis=dict(showticklabels=False, title="", zeroline=False),
                      yaxis=dict(showticklabels=False, title="", zeroline=False), plot_bgcolor="#fafafa")
    return clear_of_toolbar(fig)


def _field(obj: object, key: str, default=None):
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    try:
        return obj[key]  # Streamlit's AttributeDictionary
    except (KeyError, TypeError, IndexError):
        return getattr(obj, key, default)


def _custom(point: object) -> tuple[str, int] | None:
    cd = _field(point, "customdata")
    if cd is None:
        cd = _field(point, "custom_data")
    if cd is None:
        return None
    if isinstance(cd, Mapping):  # it may come back as {"0": ..., "1": ...}
        vals = [cd[k] for k in sorted(cd, key=lambda k: int(k))]
    else:
        vals = list(cd)
    if len(vals) < 2:
        return None
    try:
        return str(vals[0]), int(float(vals[1]))
    except (TypeError, ValueError):
        return None


def selection_points(event: object) -> list[tuple[str, int]]:
    """(scenario_id, cluster_id) of every selected point of a plotly_chart selection event
    (the return value of ``st.plotly_chart`` or its session-state entry)."""
    sel = _field(event, "selection")
    points = _field(sel, "points") or []
    out = [c for c in (_custom(p) for p in points) if c is not None]
    return list(dict.fromkeys(out))


def selected_clusters(event: object, members: pd.DataFrame) -> list[int]:
    """The current clusters of the selected scenarios (read through their ids, which stay
    valid when a rebuild has renumbered the clusters since the selection was made)."""
    sids = [s for s, _ in selection_points(event)]
    if not sids:
        return []
    cur = members.set_index("scenario_id")["cluster_id"]
    return sorted({int(c) for c in cur.reindex(sids).dropna()})


def cluster_labels(clusters: pd.DataFrame, n: int = 90) -> dict[str, str]:
    """anchor → "size · canonical text" for the cluster picker."""
    return {a: f"{int(s)} · {short(c, n)}" for a, s, c in zip(clusters["anchor"], clusters["size"],
                                                          clusters["canonical"])}


PICKER_LIMIT = 5_000  # options sent to a selectbox (one with 50k options is slow to send)


def _matching(clusters: pd.DataFrame, query: str) -> pd.DataFrame:
    if not query.strip():
        return clusters
    return clusters[clusters["canonical"].str.contains(query.strip(), case=False, regex=False, na=False)]


def cluster_options(clusters: pd.DataFrame, query: str = "", limit: int | None = None,
                    keep: str | None = None) -> list[str]:
    """Anchors for the picker, in the frame's order (largest first): those whose canonical text
    contains ``query`` (case-insensitive), at most ``limit`` (default PICKER_LIMIT), plus ``keep``
    if it still exists."""
    out = _matching(clusters, query)["anchor"].head(PICKER_LIMIT if limit is None else limit).tolist()
    if keep is not None and keep not in out and keep in set(clusters["anchor"]):
        out.append(keep)
    return out


def picker_note(clusters: pd.DataFrame, query: str = "", limit: int | None = None,
                what: str = "largest") -> str:
    """How many clusters the picker offers of how many, and how to reach the rest."""
    limit = PICKER_LIMIT if limit is None else limit
    total, matching = len(clusters), len(_matching(clusters, query))
    q = query.strip()
    if matching <= limit:
        return (f"{matching:,} of {total:,} clusters contain “{q}”." if q
                else f"All {total:,} clusters are in the list (type in it to search).")
    where = f"of the {matching:,} that contain “{q}”" if q else f"of {total:,}"
    return (f"The list holds the {limit:,} {what} clusters {where}: type words of a canonical text "
            f"into the filter box to reach any of the others.")


def anchor_of_scenario(members: pd.DataFrame, clusters: pd.DataFrame, scenario_id: str) -> str | None:
    row = members[members["scenario_id"] == scenario_id]
    if row.empty:
        return None
    hit = clusters[clusters["cluster_id"] == int(row.iloc[0]["cluster_id"])]
    return None if hit.empty else str(hit.iloc[0]["anchor"])


def cluster_ids(clusters: pd.DataFrame, anchors: Iterable[str]) -> list[int]:
    by_anchor = dict(zip(clusters["anchor"], clusters["cluster_id"]))
    return [int(by_anchor[a]) for a in anchors if a in by_anchor]


def cluster_members(members: pd.DataFrame, cluster_id: int) -> pd.DataFrame:
    m = members[members["cluster_id"] == cluster_id]
    return (m[["scenario_id", "skill_name", "role", "text", "category"]].rename(columns={"skill_name": "skill"})
            .sort_values(["skill", "role"]).reset_index(drop=True))


def merge_preview(clusters: pd.DataFrame, ids: Iterable[int]) -> pd.DataFrame:
    c = clusters[clusters["cluster_id"].isin(list(ids))]
    return c[["cluster_id", "size", "canonical"]].sort_values("size", ascending=False).reset_index(drop=True)


MERGE_ASK_AGAIN_CLUSTERS = 10   # a merge joining more clusters than this must be confirmed twice


@dataclass(frozen=True)
class MergeScope:
    """What a merge joins: dedup clusters, their scenarios, and the HDBSCAN topics (the map's
    colours) those scenarios lie in."""
    clusters: int
    scenarios: int
    topics: tuple[int, ...]
    no_topic: int  # scenarios HDBSCAN left without a topic

    @property
    def ask_again(self) -> bool:
        return self.clusters > MERGE_ASK_AGAIN_CLUSTERS or len(self.topics) > 1

    def summary(self) -> str:
        """What the merge joins, then where its scenarios lie on the map, in the map's own words
        ("topic 3", "no topic"): one sentence per fact, not a count of topics in parentheses."""
        head = (f"This merge joins {self.clusters:,} dedup clusters ({self.scenarios:,} scenarios) "
                f"into one cluster.")
        where = _topics_named(self.topics) if self.topics else ""
        if not self.no_topic:
            return f"{head} On the map, all {self.scenarios:,} lie in {where}."
        if not self.topics:
            return f"{head} On the map, none lies in a topic: all {self.scenarios:,} are “no topic” (HDBSCAN noise)."
        return (f"{head} On the map, {self.no_topic:,} of them are “no topic” (HDBSCAN noise) and "
                f"{self.scenarios - self.no_topic:,} lie in {where}.")

    def warning(self) -> str:
        why = []
        if self.clusters > MERGE_ASK_AGAIN_CLUSTERS:
            why.append(f"more than {MERGE_ASK_AGAIN_CLUSTERS} clusters")
        if len(self.topics) > 1:
            why.append(f"clusters from {len(self.topics)} different topics")
        return (f"This joins {' and '.join(why)}. The map is coloured by topic, but a selection takes "
                f"every dedup cluster it touches: check the list below before merging.")


def _topics_named(topics: tuple[int, ...], most: int = 4) -> str:
    """"topic 2", "topics 0 and 3", "topics 0, 1 and 5"; past `most`, a count ("7 topics")."""
    if len(topics) == 1:
        return f"topic {topics[0]}"
    if len(topics) > most:
        return f"{len(topics)} topics"
    return "topics " + ", ".join(map(str, topics[:-1])) + f" and {topics[-1]}"


def merge_scope(members: pd.DataFrame, ids: Iterable[int]) -> MergeScope:
    m = members[members["cluster_id"].isin(list(ids))]
    topic = m["topic"]
    return MergeScope(clusters=int(m["cluster_id"].nunique()), scenarios=len(m),
                      topics=tuple(sorted(int(t) for t in topic.dropna().unique() if t >= 0)),
                      no_topic=int((topic.isna() | (topic < 0)).sum()))


# --- the edit history ---------------------------------------------------------------------------

HISTORY_TEXTS = 3  # canonical texts named per merge in the history; the rest are counted


def _quoted(cluster: Mapping, n: int = 60) -> str:
    return f"“{short(cluster.get('canonical', ''), n)}” ({int(cluster.get('size', 0))})"


def _scenario_label(scenario_id: str) -> str:
    """"scenario 3f2a9c1d:post" from a scenario id (skill id, colon, role): for edits recorded
    before the moved scenarios' skills were."""
    skill, _, role = str(scenario_id).rpartition(":")
    return f"scenario {skill[:8]}:{role}" if skill else f"scenario {scenario_id}"


def _edit_summary(kind: str, payload: object) -> str:
    """One line per edit, in the texts and sizes the clusters had when the edit was made
    (edits made before those were recorded fall back to counts: cluster ids are renumbered
    by every rebuild, so they are never shown)."""
    p = json.loads(payload) if isinstance(payload, str) else (payload or {})
    if kind == "merge":
        n_sc = len(p.get("scenario_ids", []))
        snap = [c for c in p.get("clusters", []) if isinstance(c, Mapping)]
        if not snap:
            return f"merged {len(p.get('clusters', []))} clusters ({n_sc} scenarios)"
        named = " + ".join(_quoted(c) for c in snap[:HISTORY_TEXTS])
        more = f" + {len(snap) - HISTORY_TEXTS} more" if len(snap) > HISTORY_TEXTS else ""
        return f"merged {len(snap)} clusters ({n_sc} scenarios): {named}{more}"
    if kind == "split":
        groups = p.get("groups", [])
        moved = len(groups[-1]) if groups else 0
        texts = p.get("moved_texts") or []
        # the moved text is often the source's canonical text word for word: name whose scenario moved
        who = p.get("moved_members") or [_scenario_label(s) for s in (groups[-1] if groups else [])]
        what = (f"“{short(texts[0], 60)}”" + (f" ({who[0]})" if who else "")
                + (f" and {len(texts) - 1} more" if len(texts) > 1 else "")) if texts else f"{moved} scenario(s)"
        cluster = p.get("cluster")
        source = _quoted(cluster) if isinstance(cluster, Mapping) else f"a cluster of {sum(map(len, groups))}"
        return f"split {what} off {source}"
    if kind == "rename":
        cluster = p.get("cluster")
        old = f"{_quoted(cluster, 50)} " if isinstance(cluster, Mapping) else ""
        return f"renamed {old}to “{short(p.get('text', ''), 80)}”"
    return str(p)


def edit_history_view(history: pd.DataFrame) -> pd.DataFrame:
    cols = ["when", "kind", "what", "author", "undone", "edit_id"]
    if history.empty:
        return pd.DataFrame(columns=cols)
    return pd.DataFrame({"when": history["created_at"], "kind": history["kind"],
                         "what": [_edit_summary(k, p) for k, p in zip(history["kind"], history["payload"])],
                         "author": history["author"], "undone": history["undone_at"].notna(),
                         "edit_id": history["edit_id"]})[cols]
