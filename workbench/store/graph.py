"""The scenario graph in the store: clusters, user edits, projections, bridges, paths."""
from __future__ import annotations

import json
import uuid
from datetime import datetime

import pandas as pd
import pyarrow as pa

from workbench.store.connection import Database


def scenario_rows(db: Database) -> pd.DataFrame:
    """Both scenarios of every accepted current skill: the graph's raw nodes."""
    with db.read() as con:
        return con.execute(
            """SELECT c.skill_id || ':' || c.role AS scenario_id, c.skill_id, c.role, c.canonical AS text,
                      c.state, c.io_tool, s.name AS skill_name, s.category
               FROM scenarios c JOIN skills_effective s ON s.id = c.skill_id
               WHERE s.is_current AND s.status = 'accepted'
                 AND (SELECT count(*) FROM scenarios c2 WHERE c2.skill_id = c.skill_id) = 2
               ORDER BY c.skill_id, c.role DESC""").df()


# --- user edits of clusters ---------------------------------------------------------------

def active_edits(db: Database) -> list[dict]:
    with db.read() as con:
        rows = con.execute("SELECT edit_id, kind, payload, author, created_at FROM cluster_edits "
                           "WHERE undone_at IS NULL ORDER BY created_at, edit_id").fetchall()
    return [{"edit_id": r[0], "kind": r[1], "payload": json.loads(r[2]), "author": r[3], "created_at": r[4]}
            for r in rows]


def add_edit(db: Database, kind: str, payload: dict, author: str) -> str:
    if kind not in ("merge", "split", "rename"):
        raise ValueError(f"unknown cluster edit '{kind}'")
    edit_id = uuid.uuid4().hex[:12]
    with db.write() as con:
        con.execute("INSERT INTO cluster_edits VALUES (?, ?, ?, ?, ?, NULL)",
                    [edit_id, kind, json.dumps(payload), author, datetime.now()])
    return edit_id


def undo_edit(db: Database, edit_id: str | None = None) -> str | None:
    """Undo one edit (default: the latest still active); returns its id, or None if none."""
    with db.write() as con:
        if edit_id is None:
            row = con.execute("SELECT edit_id FROM cluster_edits WHERE undone_at IS NULL "
                              "ORDER BY created_at DESC, edit_id DESC LIMIT 1").fetchone()
            if row is None:
                return None
            edit_id = row[0]
        con.execute("UPDATE cluster_edits SET undone_at = ? WHERE edit_id = ?", [datetime.now(), edit_id])
    return edit_id


def edit_history(db: Database, limit: int = 50) -> pd.DataFrame:
    with db.read() as con:
        return con.execute("SELECT edit_id, kind, payload, author, created_at, undone_at FROM cluster_edits "
                           "ORDER BY created_at DESC LIMIT ?", [limit]).df()


# --- clusters and projections -------------------------------------------------------------

def _insert_frame(con, table: str, frame: pd.DataFrame) -> None:
    batch = pa.Table.from_pandas(frame, preserve_index=False)  # noqa: F841 (read by DuckDB)
    con.execute(f"INSERT INTO {table} ({', '.join(frame.columns)}) SELECT * FROM batch")


def save_clusters(db: Database, members: pd.DataFrame, clusters: pd.DataFrame) -> None:
    with db.write() as con:
        con.execute("DELETE FROM cluster_members")
        con.execute("DELETE FROM clusters")
        _insert_frame(con, "cluster_members", members)
        _insert_frame(con, "clusters", clusters)


def save_projection(db: Database, frame: pd.DataFrame) -> None:
    with db.write() as con:
        con.execute("DELETE FROM projections")
        _insert_frame(con, "projections", frame)


def clusters_table(db: Database) -> pd.DataFrame:
    with db.read() as con:
        return con.execute("SELECT cluster_id, anchor, canonical, size, renamed FROM clusters "
                           "ORDER BY size DESC, cluster_id").df()


def members_table(db: Database) -> pd.DataFrame:
    with db.read() as con:
        return con.execute(
            """SELECT m.scenario_id, m.skill_id, m.role, m.cluster_id, m.text, s.name AS skill_name, s.category,
                      p.x, p.y, p.topic
               FROM cluster_members m JOIN skills s ON s.id = m.skill_id
               LEFT JOIN projections p ON p.scenario_id = m.scenario_id ORDER BY m.cluster_id, m.scenario_id""").df()


# --- bridges -------------------------------------------------------------------------------

def bridge_verdicts(db: Database) -> dict[tuple[str, str], dict]:
    with db.read() as con:
        rows = con.execute("SELECT post_scenario, pre_scenario, texts_hash, verdict, reason, provider, model "
                           "FROM bridges").fetchall()
    return {(r[0], r[1]): {"texts_hash": r[2], "verdict": r[3], "reason": r[4], "provider": r[5], "model": r[6]}
            for r in rows}


def save_bridges(db: Database, frame: pd.DataFrame) -> None:
    """Replace the bridge set with the current candidates and their verdicts."""
    with db.write() as con:
        con.execute("DELETE FROM bridges")
        if len(frame):
            _insert_frame(con, "bridges", frame)


def bridges_table(db: Database, verified_only: bool = False) -> pd.DataFrame:
    where = "WHERE b.verdict = 'verified'" if verified_only else ""
    with db.read() as con:
        return con.execute(
            f"""SELECT b.*, mf.cluster_id AS from_cluster, mt.cluster_id AS to_cluster
                FROM bridges b
                LEFT JOIN cluster_members mf ON mf.scenario_id = b.post_scenario
                LEFT JOIN cluster_members mt ON mt.scenario_id = b.pre_scenario {where}
                ORDER BY b.similarity DESC""").df()


# --- builds --------------------------------------------------------------------------------

def last_build(db: Database) -> dict | None:
    with db.read() as con:
        cur = con.execute("SELECT * FROM graph_builds WHERE finished_at IS NOT NULL "
                          "ORDER BY finished_at DESC LIMIT 1")
        row = cur.fetchone()
        if row is None:
            return None
        d = dict(zip([c[0] for c in cur.description], row))
    d["stats"] = json.loads(d["stats"]) if d.get("stats") else {}
    return d


def record_build(db: Database, build_id: str, started: datetime, embedder: str, threshold: float,
                 inputs_hash: str, stats: dict) -> None:
    with db.write() as con:
        con.execute("INSERT INTO graph_builds VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [build_id, started, datetime.now(), embedder, threshold, inputs_hash, json.dumps(stats)])


# --- sampling ------------------------------------------------------------------------------

def visit_counts(db: Database) -> tuple[dict[str, int], dict[str, int]]:
    with db.read() as con:
        rows = con.execute("SELECT kind, key, count FROM visit_counts").fetchall()
    nodes = {k: int(c) for kind, k, c in rows if kind == "node"}
    skills = {k: int(c) for kind, k, c in rows if kind == "skill"}
    return nodes, skills


def save_sample(db: Database, batch: dict, paths: pd.DataFrame, steps: pd.DataFrame,
                node_counts: dict[str, int], skill_counts: dict[str, int]) -> None:
    """A batch, its paths and steps, and the new global visit counts, in one transaction."""
    counts = pd.DataFrame(
        [("node", k, v) for k, v in node_counts.items()] + [("skill", k, v) for k, v in skill_counts.items()],
        columns=["kind", "key", "count"])
    with db.write() as con:
        con.execute("INSERT INTO sample_batches VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [batch["batch_id"], batch["sampler"], batch["n_paths"], batch["seed"], batch["min_len"],
                     batch["max_len"], batch["build_id"], datetime.now()])
        if len(paths):
            _insert_frame(con, "paths", paths)
            _insert_frame(con, "path_steps", steps)
        con.execute("DELETE FROM visit_counts")
        if len(counts):
            _insert_frame(con, "visit_counts", counts)


def sample_batches(db: Database) -> pd.DataFrame:
    with db.read() as con:
        return con.execute("SELECT b.*, (SELECT count(*) FROM paths p WHERE p.batch_id = b.batch_id) AS paths "
                           "FROM sample_batches b ORDER BY created_at DESC").df()


def path_steps(db: Database, batch_id: str | None = None, limit: int = 1_000_000) -> pd.DataFrame:
    where = "WHERE p.batch_id = ?" if batch_id else ""
    args = [batch_id] if batch_id else []
    with db.read() as con:
        return con.execute(
            f"""SELECT p.batch_id, b.sampler, p.path_id, p.idx, s.step, s.src_anchor, s.skill_id, s.dst_anchor,
                       k.name AS skill_name, k.category
                FROM paths p JOIN path_steps s USING (path_id) JOIN sample_batches b USING (batch_id)
                JOIN skills k ON k.id = s.skill_id {where}
                ORDER BY p.batch_id, p.idx, s.step LIMIT {int(limit)}""", args).df()


def coverage_cells(db: Database, batch_id: str, max_paths: int | None = None) -> pd.DataFrame:
    """Visits per (scenario cluster, skill category) for one batch: the coverage heatmap's data
    (over its first ``max_paths`` paths in sampling order, when given)."""
    with db.read() as con:
        return con.execute(
            """SELECT c.canonical AS cluster, k.category, count(*) AS visits
               FROM paths p JOIN path_steps s USING (path_id)
               JOIN skills k ON k.id = s.skill_id
               LEFT JOIN clusters c ON c.anchor = s.src_anchor
               WHERE p.batch_id = ? AND (? IS NULL OR p.idx < ?) GROUP BY 1, 2""",
            [batch_id, max_paths, max_paths]).df()


def batch_path_ids(db: Database, batch_id: str) -> list[str]:
    with db.read() as con:
        return [r[0] for r in con.execute("SELECT path_id FROM paths WHERE batch_id = ? ORDER BY idx",
                                          [batch_id]).fetchall()]
