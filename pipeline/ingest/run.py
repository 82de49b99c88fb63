"""`workbench ingest`: read packages, store new skills and versions, run the filters.

Parsing touches no database. Results are committed in short transactions of a few dozen
skills, so a dashboard on the same workspace keeps reading and saving between them, and a
killed ingest keeps every chunk it committed (running it again adds the rest).
"""
from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pipeline.filters import runner
from pipeline.ingest import jsonl_export, packages
from pipeline.ingest.skill_builder import build_skill
from pipeline.ingest.skill_markdown import SkillFormatError
from workbench.models import IngestProblem, ParsedSkill
from workbench.store import skills as skill_store
from workbench.workspace import Workspace

Progress = Callable[[int, int, str], None]
CHUNK = 40


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


def _parse_all(refs, on_progress: Progress | None):
    """Yield ParsedSkill or IngestProblem for every package and JSONL record."""
    total = len(refs)
    for n, ref in enumerate(refs, start=1):
        if on_progress:
            on_progress(n - 1, total, str(getattr(ref, "folder", getattr(ref, "path", ""))))
        if isinstance(ref, packages.JsonlExport):
            yield from _parse_jsonl(ref)
            continue
        source = str(ref.folder)
        try:
            text, files, digest = packages.read_folder(ref)
            yield build_skill(text, where=f"{ref.folder}/SKILL.md", skill_key=ref.key,
                              source_kind="folder", source_path=source, source_ref=ref.source_ref,
                              package_files=files, content_hash=digest)
        except packages.PackageError as exc:
            yield IngestProblem(source=source, file=exc.file, reason=exc.reason)
        except SkillFormatError as exc:
            yield IngestProblem(source=source, file=f"{ref.folder}/SKILL.md", reason=_strip_where(str(exc)))
        except Exception as exc:  # a parser bug must cost one package, not the batch
            yield IngestProblem(source=source, file=source, reason=f"could not be read: {exc!r}")
    if on_progress:
        on_progress(total, total, "done")


def _parse_jsonl(ref: packages.JsonlExport):
    try:
        for lineno, name, text, digest, problem in jsonl_export.read_records(ref):
            where = jsonl_export.record_path(ref, lineno)
            if problem:
                yield IngestProblem(source=str(ref.path), file=where, reason=problem.reason)
                continue
            try:
                skill = build_skill(text, where=where, skill_key=jsonl_export.record_key(ref, name, lineno),
                                    source_kind="jsonl", source_path=where, source_ref=None,
                                    package_files=[], content_hash=digest)
                # A whole-SKILL.md record only names itself inside its front matter.
                yield skill if name else skill.model_copy(
                    update={"skill_key": jsonl_export.record_key(ref, skill.name, lineno)})
            except SkillFormatError as exc:
                yield IngestProblem(source=str(ref.path), file=where, reason=_strip_where(str(exc)))
    except OSError as exc:
        yield IngestProblem(source=str(ref.path), file=str(ref.path), reason=f"cannot read: {exc.strerror}")


def _strip_where(message: str) -> str:
    """SkillFormatError messages start with the location, which the report shows apart."""
    head, sep, rest = message.partition(": ")
    return rest if sep and ("/" in head or "#L" in head) else message


def ingest(ws: Workspace, paths: list[Path], on_progress: Progress | None = None) -> IngestReport:
    report = IngestReport(run_id=uuid.uuid4().hex[:12])
    started = datetime.now()
    with ws.db.write() as con:
        con.execute("INSERT INTO ingest_runs (run_id, started_at, paths) VALUES (?, ?, ?)",
                    [report.run_id, started, json.dumps([str(p) for p in paths])])
    refs, problems = packages.discover([Path(p) for p in paths])
    report.problems.extend(problems)
    known_ids, versions = skill_store.known_index(ws.db)
    pending: list[tuple[str, int, ParsedSkill]] = []

    def flush() -> None:
        if not pending:
            return
        now = datetime.now()
        verdicts = [v for sid, _, s in pending for v in runner.check_skill(sid, s)]
        with ws.db.write() as con:
            skill_store.insert_skills(con, pending, report.run_id, now)
            skill_store.upsert_verdicts(con, verdicts, report.run_id, now)
        pending.clear()

    for item in _parse_all(refs, on_progress):
        if isinstance(item, IngestProblem):
            report.problems.append(item)
            continue
        report.found += 1
        sid = item.content_hash[:16]
        if sid in known_ids:
            report.unchanged += 1
            continue
        known_ids.add(sid)
        version = versions.get(item.skill_key, 0) + 1
        versions[item.skill_key] = version
        (report.new if version == 1 else report.new_versions).append(item.skill_key)
        pending.append((sid, version, item))
        if len(pending) >= CHUNK:
            flush()
    flush()
    if report.new or report.new_versions:
        refresh_duplicates(ws, report.run_id)
    with ws.db.write() as con:
        con.execute(
            "UPDATE ingest_runs SET finished_at = ?, found = ?, new_skills = ?, new_versions = ?, "
            "unchanged = ?, errors = ? WHERE run_id = ?",
            [datetime.now(), report.found, len(report.new), len(report.new_versions), report.unchanged,
             len(report.problems), report.run_id])
        if report.problems:
            con.executemany("INSERT INTO ingest_errors VALUES (?, ?, ?, ?, ?)",
                            [[report.run_id, p.source, p.file, p.reason, datetime.now()]
                             for p in report.problems])
    return report


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
