"""Ingest throughput on a generated corpus, and the batched store write against row-by-row.

Prints skills/s for the whole ingest (discover, parse, filter, near-dup, store) and, for
the store write alone, Arrow batches vs `executemany` on the same rows.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.ingest.run import ingest  # noqa: E402
from workbench.store import skills as skill_store  # noqa: E402
from workbench.workspace import Workspace  # noqa: E402


def make_corpus(root: Path, n: int) -> None:
    tools = ["jq", "awk", "sed", "tar", "sqlite3", "git", "curl", "find", "sort", "gzip"]
    for i in range(n):
        t = tools[i % len(tools)]
        d = root / f"gen-{i // 500}" / f"{t}-task-{i}"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(
            f"---\nname: {t}-task-{i}\ndescription: Use {t} on dataset {i} under /data/set{i} and report "
            f"{i % 13} figures.\nlicense: MIT\n---\n# {t} task {i}\n\n## Inputs\n- `/data/set{i}/in.txt`\n\n"
            f"## Outputs\n- `/data/set{i}/out.txt`\n\n## Steps\n1. Inspect `/data/set{i}` with `ls -la`.\n"
            f"2. Run `{t}` over `in.txt` with option set {i % 7}.\n3. Write the {i % 13} figures to `out.txt`.\n"
            f"4. Check the line count with `wc -l /data/set{i}/out.txt`.\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skills", type=int, default=3000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        make_corpus(corpus, args.skills)
        ws = Workspace.open(Path(tmp) / "ws")
        t0 = time.perf_counter()
        report = ingest(ws, [corpus])
        total_s = time.perf_counter() - t0
        assert len(report.new) == args.skills, report.as_dict()
        rows = [(sid, 1, s) for sid, s, _ in skill_store.current_skills(ws.db)]
        # store write alone: Arrow batch (what ingest uses) vs executemany baseline
        fresh = Workspace.open(Path(tmp) / "ws-arrow")
        t0 = time.perf_counter()
        with fresh.db.write() as con:
            skill_store.insert_skills(con, rows, "bench", datetime.now())
        arrow_s = time.perf_counter() - t0
        base = Workspace.open(Path(tmp) / "ws-rows")
        cols = skill_store._COLUMNS
        t0 = time.perf_counter()
        with base.db.write() as con:
            import json
            con.executemany(
                f"INSERT INTO skills ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                [[{**s.model_dump(), "id": sid, "version": 1, "is_current": True,
                   "front_matter": json.dumps(s.front_matter), "ingest_run_id": "b",
                   "ingested_at": datetime.now()}[c] for c in cols] for sid, _, s in rows])
        rows_s = time.perf_counter() - t0
    print(f"ingest of {args.skills} skills: {total_s:.2f} s ({args.skills / total_s:.0f} skills/s)")
    print(f"store write: arrow batch {arrow_s:.3f} s, executemany {rows_s:.3f} s")
    print(f"RESULT skills_per_s={args.skills / total_s:.0f} store_speedup_vs_executemany={rows_s / arrow_s:.1f}")


if __name__ == "__main__":
    main()
