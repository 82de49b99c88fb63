"""Build and filter the records of a JSONL export, in worker processes when it is large.

Parsing a record and running the per-skill rules cost about a millisecond of CPU, which
alone would hold one process under 1,000 records/s. So a large export's lines are read
here (in bounded reads, see `jsonl_export.read_lines`) and handed out in blocks to a pool
of spawned processes (pipeline/ingest/worker_pool.py); results come back in line order, at
most a few blocks ahead, so memory stays flat however long the export is. A small export is
parsed in this process: starting workers costs more than it saves.
"""
from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from pipeline.filters import runner
from pipeline.ingest import jsonl_export
from pipeline.ingest.packages import JsonlExport
from pipeline.ingest.skill_builder import build_skill
from pipeline.ingest.skill_markdown import SkillFormatError
from pipeline.ingest.worker_pool import in_order, worker_count
from workbench.models import FilterVerdict, IngestProblem, ParsedSkill

# A skill with its verdicts (computed where it was parsed), or a problem.
Parsed = tuple[ParsedSkill, list[FilterVerdict]] | IngestProblem

BLOCK_LINES = 250
POOL_MIN_BYTES = 2 << 20  # below this an export is parsed in this process


def parse_lines(ref: JsonlExport, lines: list[tuple[int, bytes | None, int]]) -> list[Parsed]:
    out: list[Parsed] = []
    source = str(ref.path)
    for rec in jsonl_export.records_of(ref, lines):
        where = jsonl_export.record_path(ref, rec.lineno)
        if rec.problem:
            out.append(IngestProblem(source=source, file=where, reason=rec.problem.reason))
            continue
        try:
            skill = build_skill(rec.text, where=where, skill_key=jsonl_export.record_key(ref, rec.name, rec.lineno),
                                source_kind="jsonl", source_path=where, source_ref=None,
                                package_files=[], content_hash=rec.digest, front_matter=rec.front_matter)
            if not rec.name:  # a whole-SKILL.md record only names itself inside its front matter
                skill = skill.model_copy(update={"skill_key": jsonl_export.record_key(ref, skill.name, rec.lineno)})
            out.append((skill, runner.check_skill(skill.content_hash[:16], skill)))
        except SkillFormatError as exc:
            out.append(IngestProblem(source=source, file=where, reason=exc.reason))
        except Exception as exc:  # a parser bug must cost one record, not the export
            out.append(IngestProblem(source=source, file=where, reason=f"could not be read: {exc!r}"))
    return out


def _blocks(ref: JsonlExport) -> Iterator[list[tuple[int, bytes | None, int]]]:
    block: list[tuple[int, bytes | None, int]] = []
    with open(ref.path, "rb") as fh:
        for line in jsonl_export.read_lines(fh):
            block.append(line)
            if len(block) >= BLOCK_LINES:
                yield block
                block = []
    if block:
        yield block


def parse_export(ref: JsonlExport) -> Iterator[Parsed]:
    """Every record of the export, in line order."""
    workers = worker_count() if ref.path.stat().st_size >= POOL_MIN_BYTES else 1
    for _, parsed in in_order(_blocks(ref), partial(parse_lines, ref), workers):
        yield from parsed
