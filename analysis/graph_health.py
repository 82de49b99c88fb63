"""How well the scenario graph can give multi-step paths: health figures, their targets, advice.

Pure functions over the graph as arrays (cluster index per skill's pre- and postcondition,
cluster-level edges, sampled path lengths). Nothing here reads the store or imports
Streamlit: `workbench graph stats` and the Graph page's health card both call
:func:`measure` on an assembled graph and read the same :class:`GraphHealth`.

The figures (every share is of clusters that carry a skill's scenario, or of skills):

- ``self_loop_share``: skills whose pre- and postcondition land in the same cluster; such a
  skill is no edge, so a path cannot go on through it.
- ``largest_wcc_share``: clusters in the largest weakly connected component (skill edges
  and verified bridges, direction ignored).
- ``isolated_share``: clusters with no edge at all (a self-loop is no edge).
- ``clusters_per_accepted_skill``: clusters / skills in the graph; low means collapsed.
- ``max_cluster_share``: the largest cluster's share of all scenarios (a hub).
- ``mean_path_len``: mean steps of a fresh inverse-frequency sample (counts start at zero,
  nothing is stored), drawn with ``workbench sample``'s default lengths.
"""
from __future__ import annotations

import operator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # analysis/ reads the assembled graph; the type is only named here
    from pipeline.graph.assemble import AssembledGraph
    from pipeline.graph.transitions import TransitionGraph

SAMPLE_PATHS = 200       # paths drawn for mean_path_len unless asked otherwise
SAMPLE_SEED = 0
SAMPLE_MIN_LEN, SAMPLE_MAX_LEN = 2, 6    # `workbench sample`'s defaults


@dataclass(frozen=True)
class Target:
    """A figure's target from the real-corpus requirements: ``value <op> bound``."""
    figure: str
    label: str
    op: str          # "<=" or ">="
    bound: float
    percent: bool    # shown as a percentage

    def met(self, value: float) -> bool:
        return bool(np.isfinite(value)) and {"<=": operator.le, ">=": operator.ge}[self.op](value, self.bound)

    def text(self) -> str:
        return f"{self.op.replace('<=', '≤').replace('>=', '≥')} {_fmt(self.bound, self.percent)}"


# The targets, defined once (CLI, page and advice read them from here).
TARGETS: dict[str, Target] = {t.figure: t for t in (
    Target("self_loop_share", "Self-loop skills", "<=", 0.25, True),
    Target("largest_wcc_share", "In the largest component", ">=", 0.40, True),
    Target("mean_path_len", "Mean sampled path", ">=", 2.3, False),
    Target("clusters_per_accepted_skill", "Clusters per skill", ">=", 0.25, False),
    Target("max_cluster_share", "Largest cluster's share", "<=", 0.05, True),
)}
# Shown with the others but without a target of its own (largest_wcc_share stands for it).
UNTARGETED = {"isolated_share": ("Isolated share", True)}


@dataclass(frozen=True)
class GraphHealth:
    self_loop_share: float
    largest_wcc_share: float
    isolated_share: float
    clusters_per_accepted_skill: float
    max_cluster_share: float
    mean_path_len: float
    # the counts the shares are made of
    skills: int
    self_loop_skills: int
    clusters: int                  # clusters that carry a skill's scenario
    largest_wcc_clusters: int
    isolated_clusters: int
    scenarios: int
    largest_cluster_scenarios: int
    edges: int                     # distinct cluster pairs joined by a skill or a bridge
    # the fresh sample behind mean_path_len
    sample_paths: int
    sample_seed: int
    sample_min_len: int
    sample_max_len: int
    paths_below_min_len: int

    def as_dict(self) -> dict:
        """The figures and counts, each target and whether it is met, and the advice."""
        return {**asdict(self),
                "targets": {k: {"op": t.op, "value": t.bound} for k, t in TARGETS.items()},
                "meets": {k: t.met(getattr(self, k)) for k, t in TARGETS.items()},
                "advice": advice(self)}


# --- the figures ------------------------------------------------------------------------------

def _share(part: float, whole: float) -> float:
    return float(part) / float(whole) if whole else float("nan")


def self_loop_share(pre: np.ndarray, post: np.ndarray) -> float:
    """Skills whose precondition and postcondition are in the same cluster / all skills."""
    pre, post = np.asarray(pre), np.asarray(post)
    return _share(int((pre == post).sum()), len(pre))


def scenarios_per_cluster(pre: np.ndarray, post: np.ndarray, n_clusters: int) -> np.ndarray:
    """How many scenarios (a skill's pre or post) each cluster holds."""
    both = np.concatenate([np.asarray(pre, dtype=np.int64), np.asarray(post, dtype=np.int64)])
    return np.bincount(both, minlength=int(n_clusters))


def _proper_edges(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    keep = src != dst
    return src[keep], dst[keep]


def component_sizes(n_clusters: int, src: np.ndarray, dst: np.ndarray, carrying: np.ndarray) -> np.ndarray:
    """Sizes (in carrying clusters) of the weakly connected components, largest first."""
    src, dst = _proper_edges(src, dst)
    n = int(n_clusters)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    from scipy.sparse import coo_matrix  # (loaded here: the CLI's parser imports this module)
    from scipy.sparse.csgraph import connected_components
    adj = coo_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
    _, labels = connected_components(adj, directed=True, connection="weak")
    sizes = np.bincount(labels[np.asarray(carrying, dtype=bool)], minlength=int(labels.max()) + 1)
    return np.sort(sizes[sizes > 0])[::-1]


def largest_wcc_share(n_clusters: int, src: np.ndarray, dst: np.ndarray, carrying: np.ndarray) -> float:
    """Carrying clusters in the largest weakly connected component / carrying clusters."""
    sizes = component_sizes(n_clusters, src, dst, carrying)
    return _share(int(sizes[0]) if len(sizes) else 0, int(np.asarray(carrying, dtype=bool).sum()))


def isolated_clusters(n_clusters: int, src: np.ndarray, dst: np.ndarray, carrying: np.ndarray) -> np.ndarray:
    """Mask of carrying clusters that no edge touches (a self-loop is no edge)."""
    src, dst = _proper_edges(src, dst)
    touched = np.zeros(int(n_clusters), dtype=bool)
    touched[src] = True
    touched[dst] = True
    return np.asarray(carrying, dtype=bool) & ~touched


def isolated_share(n_clusters: int, src: np.ndarray, dst: np.ndarray, carrying: np.ndarray) -> float:
    return _share(int(isolated_clusters(n_clusters, src, dst, carrying).sum()),
                  int(np.asarray(carrying, dtype=bool).sum()))


def clusters_per_accepted_skill(n_carrying: int, n_skills: int) -> float:
    return _share(n_carrying, n_skills)


def max_cluster_share(sizes: np.ndarray) -> float:
    """The largest cluster's scenarios / all scenarios."""
    sizes = np.asarray(sizes)
    return _share(int(sizes.max()) if len(sizes) else 0, int(sizes.sum()))


def mean_path_len(lengths: np.ndarray) -> float:
    lengths = np.asarray(lengths)
    return float(lengths.mean()) if len(lengths) else float("nan")


def fresh_path_lengths(transitions: "TransitionGraph", n: int = SAMPLE_PATHS, seed: int = SAMPLE_SEED,
                       min_len: int = SAMPLE_MIN_LEN, max_len: int = SAMPLE_MAX_LEN) -> np.ndarray:
    """Steps per path of ``n`` inverse-frequency paths drawn with zero visit counts (the
    stored counts are neither read nor changed). No transitions: no paths."""
    from pipeline.graph.sampling import sample_inverse_frequency  # numba: loaded only to sample
    if transitions.n_edges == 0:
        return np.zeros(0, dtype=np.int64)
    paths, _, _ = sample_inverse_frequency(transitions, n, seed, min_len=min_len, max_len=max_len)
    return paths.lengths()


# --- all of them at once -----------------------------------------------------------------------

def health(pre: np.ndarray, post: np.ndarray, n_clusters: int, edges: pd.DataFrame, lengths: np.ndarray, *,
           seed: int = SAMPLE_SEED, min_len: int = SAMPLE_MIN_LEN, max_len: int = SAMPLE_MAX_LEN) -> GraphHealth:
    """The figures from one cluster index per skill's pre and post, the cluster edges
    (``src``, ``dst``: skills and bridges) and the sampled path lengths."""
    pre, post = np.asarray(pre, dtype=np.int64), np.asarray(post, dtype=np.int64)
    sizes = scenarios_per_cluster(pre, post, n_clusters)
    carrying = sizes > 0
    src, dst = _proper_edges(edges["src"].to_numpy(), edges["dst"].to_numpy())
    comps = component_sizes(n_clusters, src, dst, carrying)
    iso = isolated_clusters(n_clusters, src, dst, carrying)
    n_carrying = int(carrying.sum())
    lengths = np.asarray(lengths)
    return GraphHealth(
        self_loop_share=self_loop_share(pre, post),
        largest_wcc_share=_share(int(comps[0]) if len(comps) else 0, n_carrying),
        isolated_share=_share(int(iso.sum()), n_carrying),
        clusters_per_accepted_skill=clusters_per_accepted_skill(n_carrying, len(pre)),
        max_cluster_share=max_cluster_share(sizes),
        mean_path_len=mean_path_len(lengths),
        skills=len(pre), self_loop_skills=int((pre == post).sum()), clusters=n_carrying,
        largest_wcc_clusters=int(comps[0]) if len(comps) else 0, isolated_clusters=int(iso.sum()),
        scenarios=int(sizes.sum()), largest_cluster_scenarios=int(sizes.max()) if len(sizes) else 0,
        edges=int(len(set(zip(src.tolist(), dst.tolist())))),
        sample_paths=len(lengths), sample_seed=int(seed), sample_min_len=int(min_len), sample_max_len=int(max_len),
        paths_below_min_len=int((lengths < min_len).sum()))


def measure(g: "AssembledGraph", n: int = SAMPLE_PATHS, seed: int = SAMPLE_SEED, min_len: int = SAMPLE_MIN_LEN,
            max_len: int = SAMPLE_MAX_LEN) -> GraphHealth:
    """:func:`health` of an assembled graph, with a fresh sample of ``n`` paths."""
    if int(n) < 1:
        raise ValueError(f"the sample needs at least one path, got {n}")
    edges = pd.concat([g.skill_edges[["src", "dst"]], g.bridge_edges[["src", "dst"]]], ignore_index=True)
    lengths = fresh_path_lengths(g.transitions, n, seed, min_len, max_len)
    return health(g.skill_clusters["pre"].to_numpy(), g.skill_clusters["post"].to_numpy(), g.transitions.n_nodes,
                  edges, lengths, seed=seed, min_len=min_len, max_len=max_len)


# --- how to read them ---------------------------------------------------------------------------

def _fmt(value: float, percent: bool) -> str:
    if not np.isfinite(value):
        return "n/a"
    return f"{value:.1%}" if percent else f"{value:.2f}"


@dataclass(frozen=True)
class CardItem:
    figure: str
    label: str
    value: str
    target: str       # "" for a figure without a target
    ok: bool | None   # None: no target


def card(h: GraphHealth) -> list[CardItem]:
    """One item per figure, in the card's order, with its target and whether it is met."""
    items = [CardItem(k, t.label, _fmt(getattr(h, k), t.percent), t.text(), t.met(getattr(h, k)))
             for k, t in TARGETS.items()]
    items += [CardItem(k, label, _fmt(getattr(h, k), pct), "", None) for k, (label, pct) in UNTARGETED.items()]
    return items


def too_sparse(h: GraphHealth) -> bool:
    """The graph cannot be relied on for multi-step paths: a target it misses."""
    return not all(t.met(getattr(h, k)) for k, t in TARGETS.items())


def summary(h: GraphHealth) -> str:
    """One sentence above the advice: how many targets are met and what that means for paths."""
    missed = [k for k, t in TARGETS.items() if not t.met(getattr(h, k))]
    if not missed:
        return f"Meets every target: fresh paths average {_fmt(h.mean_path_len, False)} steps."
    what = ("too sparse to give multi-step paths" if {"mean_path_len", "largest_wcc_share", "self_loop_share"}
            & set(missed) else "collapsed onto a few states")
    return f"Misses {len(missed)} of {len(TARGETS)} targets: the graph is {what}."


def advice(h: GraphHealth) -> list[str]:
    """Plain sentences on what to do, one per missed target (none when every target is met)."""
    if not too_sparse(h):
        return []
    met = {k: t.met(getattr(h, k)) for k, t in TARGETS.items()}
    out = []
    if not met["mean_path_len"]:
        short = (f"; {h.paths_below_min_len} of {h.sample_paths} sampled paths stop before {h.sample_min_len} steps "
                 "as the cluster they reach has no out-edge to a cluster not yet on the path" if h.paths_below_min_len else "")
        out.append(f"Paths average {_fmt(h.mean_path_len, False)} steps (target {TARGETS['mean_path_len'].text()})"
                   f"{short}: the graph is too sparse for multi-step tasks.")
    if not met["self_loop_share"]:
        out.append(f"{h.self_loop_skills} of {h.skills} skills start and end in the same cluster, so they add no "
                   "edge: their pre- and postconditions read alike. Infer scenarios with an LLM "
                   "(`workbench scenarios infer --provider llm --force`), or split such clusters on the Scenarios "
                   "page.")
    if not met["largest_wcc_share"]:
        out.append(f"The largest connected part holds {h.largest_wcc_clusters} of {h.clusters} clusters and "
                   f"{h.isolated_clusters} clusters touch no edge: merge clusters that describe the same state on "
                   "the Scenarios page, or let more bridges through (`workbench graph build --bridge-threshold "
                   "0.5`, or `--verifier llm`).")
    if not met["max_cluster_share"]:
        out.append(f"One cluster holds {h.largest_cluster_scenarios} of {h.scenarios} scenarios (a hub): split it on "
                   "the Scenarios page or rebuild with a stricter dedup threshold (`workbench graph build "
                   "--threshold 0.92`).")
    if not met["clusters_per_accepted_skill"]:
        out.append(f"{h.clusters} clusters for {h.skills} skills: scenarios have collapsed onto few states; "
                   "rebuild with a stricter dedup threshold (`--threshold 0.92`) or infer scenarios with an LLM.")
    if h.skills < 50:
        out.append(f"Only {h.skills} accepted skills have scenarios: ingest more skills (`workbench ingest PATH`) "
                   "so that more of them meet.")
    return out
