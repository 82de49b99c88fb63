"""`workbench graph stats`: the graph's health figures, their targets and what to do."""
from __future__ import annotations

import argparse
import json
import math

from rich.table import Table

from workbench.console import err, out
from workbench.workspace import Workspace


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of paths, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"the sample needs at least one path, got {value}")
    return value


def _json_safe(value):
    """NaN (a figure of an empty graph) as null: strict JSON has no NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def cmd_graph_stats(args) -> int:
    from analysis import graph_health as gh
    from pipeline.graph.assemble import assemble
    ws = Workspace.open(args.workspace)
    try:
        g = assemble(ws.db)
    except ValueError as exc:
        err.print(f"[red]{exc}[/red]", soft_wrap=True)
        return 1
    h = gh.measure(g, n=args.sample, seed=args.seed)
    if args.json:
        data = _json_safe(h.as_dict())
        data.update(skill_edges=int(len(g.skill_edges)), bridge_edges=int(len(g.bridge_edges)),
                    transitions=int(g.transitions.n_edges))
        print(json.dumps(data, indent=2))
        return 0
    t = Table(title=f"Graph health of {ws.root}")
    for col, justify in (("figure", "left"), ("value", "right"), ("target", "left"), ("", "left")):
        t.add_column(col, justify=justify)
    for item in gh.card(h):
        mark = "" if item.ok is None else ("[green]ok[/green]" if item.ok else "[red]missed[/red]")
        t.add_row(f"{item.label} ({item.figure})", item.value, item.target, mark)
    out.print(t)
    out.print(f"{h.skills} skills, {h.scenarios} scenarios in {h.clusters} clusters; {h.self_loop_skills} self-loop "
              f"skills, {h.isolated_clusters} isolated clusters, largest component {h.largest_wcc_clusters} "
              f"clusters; {len(g.skill_edges)} skill edges, {len(g.bridge_edges)} bridges, "
              f"{g.transitions.n_edges} transitions. Mean path length of {h.sample_paths} fresh inverse-frequency "
              f"paths (seed {h.sample_seed}, {h.paths_below_min_len} shorter than {h.sample_min_len}).",
              soft_wrap=True)
    for sentence in gh.advice(h):
        out.print(f"[yellow]•[/yellow] {sentence}", soft_wrap=True)
    return 0


def add_stats_command(graph_sub, common: argparse.ArgumentParser) -> None:
    from analysis.graph_health import SAMPLE_PATHS, SAMPLE_SEED
    s = graph_sub.add_parser("stats", parents=[common],
                             help="health figures (self-loops, largest component, isolated clusters, mean path "
                                  "length of a fresh sample) against their targets, with advice")
    s.add_argument("--json", action="store_true", help="print the figures, counts, targets and advice as JSON")
    s.add_argument("--sample", type=_positive, default=SAMPLE_PATHS,
                   help=f"inverse-frequency paths drawn for the mean path length (default {SAMPLE_PATHS}; "
                        "nothing is stored)")
    s.add_argument("--seed", type=int, default=SAMPLE_SEED, help=f"the sample's seed (default {SAMPLE_SEED})")
    s.set_defaults(func=cmd_graph_stats)
