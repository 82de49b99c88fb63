"""`workbench ingest`: read packages, store new skills and versions, run the filters.

Parsing touches no database (and runs in worker processes when there are many packages:
pipeline/ingest/package_workers.py). Results are committed in short transactions (see _Batch), so a
dashboard on the same workspace keeps reading and saving between them, and a killed ingest
keeps every chunk it committed, with the problems found so far and the run's counts
(running it again adds the rest).
"""
from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pipeline.filters import runner
from pipeline.ingest import package_workers, packages
from workbench.models import FilterVerdict, IngestProblem, ParsedSkill
from workbench.store import skills as skill_store
from workbench.workspace import Workspace

Progress = package_workers.Progress
CHUNK = 40        # items per commit while commits are less than FLUSH_S apart
MAX_CHUNK = 2000  # items per commit at most
FLUSH_S = 0.25  # a dashboard sees an ingest move 4 times a second (at 1 s a 1,200-skill folder landed in one commit)


@dataclass
class IngestReport:
    run_id: str
    found: int = 0
    new: list[str] = field(default_factory=list)
    new_versions: list[str] = field(default_factory=list)
    unchanged: int = 0
    problems: list[IngestProblem] = field(default_factory=list)

    @property
    def ingested(self) -> int:
        return len(self.new) + len(self.new_versions) + self.unchanged

    def as_dict(self) -> dict:
        return {"run_id": self.run_id, "found": self.found, "new": len(self.new),
                "new_versions": len(self.new_versions), "unchanged": self.unchanged,
                "errors": len(self.problems), "problems": [p.model_dump() for p in self.problems]}


def ingest(ws: Workspace, paths: list[Path], on_progress: Progress | None = None,
           workers: int | None = None) -> IngestReport:
    """workers: processes that read, parse and filter folder packages (default: one a CPU when
    there are many packages; 1: all in this process). The outcome is the same either way."""
    report = IngestReport(run_id=uuid.uuid4().hex[:12])
    with ws.db.write() as con:
        con.execute("INSERT INTO ingest_runs (run_id, started_at, paths) VALUES (?, ?, ?)",
                    [report.run_id, datetime.now(), json.dumps([str(p) for p in paths])])
    refs, problems = packages.discover([Path(p) for p in paths])
    known_ids, versions = skill_store.known_index(ws.db)
    batch = _Batch(ws, report)
    batch.problems.extend(problems)
    for item in package_workers.parse_all(refs, dict(known_ids), on_progress, workers):
        if isinstance(item, IngestProblem):
            batch.problems.append(item)
        else:
            skill, verdicts = item
            report.found += 1
            sid = skill_id(skill, known_ids)
            if sid in known_ids:
                report.unchanged += 1
            else:
                known_ids[sid] = skill.skill_key
                version = versions.get(skill.skill_key, 0) + 1
                versions[skill.skill_key] = version
                (report.new if version == 1 else report.new_versions).append(skill.skill_key)
                batch.skills.append((sid, version, skill))
                if verdicts is None:
                    verdicts = runner.check_skill(sid, skill)
                batch.verdicts.extend(v if v.skill_id == sid else v.model_copy(update={"skill_id": sid})
                                      for v in verdicts)
        batch.maybe_flush()
    batch.flush()
    if report.new or report.new_versions:
        refresh_duplicates(ws, report.run_id)
    with ws.db.write() as con:
        skill_store.update_ingest_run(con, report.run_id, _counts(report), finished=datetime.now())
    return report


def skill_id(skill: ParsedSkill, known: dict[str, str]) -> str:
    """The content hash; for a byte-identical copy of a package stored under another key, the
    hash of content and key, so the copy is a skill of its own (the near-duplicate rule then
    names the original) instead of being silently counted as the original, unchanged."""
    sid = skill.content_hash[:16]
    if known.get(sid, skill.skill_key) == skill.skill_key:
        return sid
    return hashlib.sha256(f"{skill.content_hash}\0{skill.skill_key}".encode()).hexdigest()[:16]


def _counts(report: IngestReport) -> skill_store.IngestCounts:
    return skill_store.IngestCounts(found=report.found, new_skills=len(report.new),
                                    new_versions=len(report.new_versions), unchanged=report.unchanged,
                                    errors=len(report.problems))


class _Batch:
    """Skills and problems not yet committed. Each commit stores them together with the run's
    counts so far, so a killed ingest leaves a run row and a problem list that match what it kept.
    A commit comes once CHUNK items wait and FLUSH_S has passed since the last (or once
    MAX_CHUNK wait): a dashboard's reads and saves keep flowing between commits, and a large
    export does not pay one transaction per 40 records."""

    def __init__(self, ws: Workspace, report: IngestReport) -> None:
        self.ws, self.report = ws, report
        self.skills: list[tuple[str, int, ParsedSkill]] = []
        self.verdicts: list[FilterVerdict] = []
        self.problems: list[IngestProblem] = []
        self.last = time.monotonic()

    def maybe_flush(self) -> None:
        waiting = len(self.skills) + len(self.problems)
        if waiting >= MAX_CHUNK or (waiting >= CHUNK and time.monotonic() - self.last >= FLUSH_S):
            self.flush()

    def flush(self) -> None:
        self.last = time.monotonic()
        if not self.skills and not self.problems:
            return
        now = datetime.now()
        self.report.problems.extend(self.problems)
        with self.ws.db.write() as con:
            skill_store.insert_skills(con, self.skills, self.report.run_id, now)
            skill_store.upsert_verdicts(con, self.verdicts, self.report.run_id, now)
            skill_store.insert_ingest_problems(con, self.report.run_id, self.problems, now)
            skill_store.update_ingest_run(con, self.report.run_id, _counts(self.report))
        self.skills.clear()
        self.verdicts.clear()
        self.problems.clear()
        self.last = time.monotonic()


def refresh_duplicates(ws: Workspace, run_id: str) -> None:
    verdicts = runner.check_duplicates(skill_store.current_skills(ws.db))
    now = datetime.now()
    for i in range(0, len(verdicts), 500):
        with ws.db.write() as con:
            skill_store.upsert_verdicts(con, verdicts[i:i + 500], run_id, now)


def refilter(ws: Workspace, on_progress: Progress | None = None) -> int:
    """Run every rule again over the current skills (after rules or thresholds change)."""
    run_id = "filter-" + uuid.uuid4().hex[:8]
    current = skill_store.current_skills(ws.db)
    now = datetime.now()
    for i in range(0, len(current), CHUNK):
        chunk = current[i:i + CHUNK]
        verdicts = [v for sid, s, _ in chunk for v in runner.check_skill(sid, s)]
        with ws.db.write() as con:
            skill_store.upsert_verdicts(con, verdicts, run_id, now)
        if on_progress:
            on_progress(min(i + CHUNK, len(current)), len(current), "filtering")
    refresh_duplicates(ws, run_id)
    return len(current)
