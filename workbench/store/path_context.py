"""What a synthesizer reads of a path besides its skills: each skill's stored pre/post
scenario and the bridge that links one step's post scenario to the next step's pre.

A path step goes from cluster node `src_anchor` to `dst_anchor` (cluster anchors: medoid
scenario ids). The step after may start in the same cluster as this step's post scenario
(no bridge needed) or in a cluster reached through a bridge; a bridge row is keyed by two
scenario ids (`skill_id:post`, `skill_id:pre`), and a verified bridge between two clusters
links any members of them, so the pair's best row is looked up through the clusters.
"""
from __future__ import annotations

import pandas as pd

from workbench.store.connection import Database

SCENARIO_FIELDS = ("goal", "context", "capability", "state", "io_tool", "canonical")


def path_scenarios(db: Database, path_ids: list[str]) -> pd.DataFrame:
    """skill_id, role and the five dimensions + canonical of every skill on the given paths
    (only the scenarios that exist: a skill inferred without a pair has no rows)."""
    cols = ["skill_id", "role", *SCENARIO_FIELDS]
    if not path_ids:
        return pd.DataFrame(columns=cols)
    with db.read() as con:
        return con.execute(
            f"""SELECT c.skill_id, c.role, {', '.join('c.' + f for f in SCENARIO_FIELDS)}
                FROM scenarios c
                WHERE c.skill_id IN (SELECT DISTINCT skill_id FROM path_steps
                                     WHERE path_id IN (SELECT unnest(?::VARCHAR[])))
                ORDER BY c.skill_id, c.role""", [path_ids]).df()


def path_bridges(db: Database, path_ids: list[str]) -> pd.DataFrame:
    """One row per step that has a next step: path_id, step, from_skill, to_skill,
    same_cluster (the next skill starts where this one ends: no bridge needed), and the best
    stored bridge between the two clusters (verified first, then the exact skill pair, then
    the most similar); bridge columns are NULL where no row links the clusters."""
    cols = ["path_id", "step", "from_skill", "to_skill", "same_cluster", "verdict", "similarity", "reason",
            "exact"]
    if not path_ids:
        return pd.DataFrame(columns=cols)
    with db.read() as con:
        return con.execute(
            """WITH steps AS (
                   SELECT path_id, step, skill_id AS from_skill,
                          lead(skill_id) OVER (PARTITION BY path_id ORDER BY step) AS to_skill
                   FROM path_steps WHERE path_id IN (SELECT unnest(?::VARCHAR[]))),
               pairs AS (
                   SELECT s.*, mf.cluster_id AS from_cluster, mt.cluster_id AS to_cluster
                   FROM steps s
                   LEFT JOIN cluster_members mf ON mf.scenario_id = s.from_skill || ':post'
                   LEFT JOIN cluster_members mt ON mt.scenario_id = s.to_skill || ':pre'
                   WHERE s.to_skill IS NOT NULL),
               linked AS (
                   SELECT p.path_id, p.step, b.verdict, b.similarity, b.reason,
                          (b.post_scenario = p.from_skill || ':post' AND b.pre_scenario = p.to_skill || ':pre') AS exact
                   FROM pairs p
                   JOIN cluster_members bf ON bf.cluster_id = p.from_cluster
                   JOIN cluster_members bt ON bt.cluster_id = p.to_cluster
                   JOIN bridges b ON b.post_scenario = bf.scenario_id AND b.pre_scenario = bt.scenario_id
                   QUALIFY row_number() OVER (PARTITION BY p.path_id, p.step
                       ORDER BY b.verdict = 'verified' DESC, exact DESC, b.similarity DESC) = 1)
               SELECT p.path_id, p.step, p.from_skill, p.to_skill,
                      coalesce(p.from_cluster = p.to_cluster, false) AS same_cluster,
                      l.verdict, l.similarity, l.reason, coalesce(l.exact, false) AS exact
               FROM pairs p LEFT JOIN linked l ON l.path_id = p.path_id AND l.step = p.step
               ORDER BY p.path_id, p.step""", [path_ids]).df()
