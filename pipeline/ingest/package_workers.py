"""Read, parse and filter the packages an ingest found, in worker processes when there are many.

A folder package costs ~20 ms of CPU to read, parse and run the per-skill rules on (the
bundled-code scan included), which holds one process near 50 packages/s; the work of one
package needs nothing of another's. So packages go out in blocks to the pool of
pipeline/ingest/worker_pool.py and come back in the order they were found: the driver stores
them exactly as a serial ingest would, and the verdicts are the same. A package already stored
unchanged (its content hash known under its key before this run) skips the rules: the driver
counts it unchanged and needs none. JSONL exports are parsed when their turn comes, by their
own pool (jsonl_workers). A small corpus is parsed in this process: starting workers (about a
second, in parallel) costs more than it saves.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator

from pipeline.filters import runner
from pipeline.ingest import jsonl_workers, packages
from pipeline.ingest.jsonl_workers import Parsed
from pipeline.ingest.skill_builder import build_skill
from pipeline.ingest.skill_markdown import SkillFormatError
from pipeline.ingest.worker_pool import in_order, worker_count
from workbench.models import IngestProblem

Progress = Callable[[int, int, str], None]
BLOCK_PACKAGES = 8
POOL_MIN_PACKAGES = 150
# (the folder packages of one block, the skill ids stored under their keys before this run)
Block = tuple[tuple[packages.FolderPackage, ...], dict[str, str]]


def parse_package(ref: packages.FolderPackage, known: dict[str, str]) -> Parsed:
    """The package's skill with its verdicts (None when it is stored unchanged), or a problem."""
    source = str(ref.folder)
    try:
        text, files, digest = packages.read_folder(ref)
        skill = build_skill(text, where=f"{ref.folder}/SKILL.md", skill_key=ref.key, source_kind="folder",
                            source_path=source, source_ref=ref.source_ref, package_files=files,
                            content_hash=digest)
    except packages.PackageError as exc:
        return IngestProblem(source=source, file=exc.file, reason=exc.reason)
    except SkillFormatError as exc:
        return IngestProblem(source=source, file=f"{ref.folder}/SKILL.md", reason=exc.reason)
    except Exception as exc:  # a parser bug must cost one package, not the batch
        return IngestProblem(source=source, file=source, reason=f"could not be read: {exc!r}")
    sid = skill.content_hash[:16]
    if known.get(sid) == skill.skill_key:
        return skill, None
    return skill, runner.check_skill(sid, skill)


def parse_block(block: Block) -> list[Parsed]:
    refs, known = block
    return [parse_package(ref, known) for ref in refs]


def _blocks(refs: list, known_ids: dict[str, str]) -> Iterator[Block | packages.JsonlExport]:
    """Runs of folder packages, BLOCK_PACKAGES at most, and each JSONL export in its place."""
    ids_of: dict[str, list[str]] = defaultdict(list)
    for sid, key in known_ids.items():
        ids_of[key].append(sid)
    run: list[packages.FolderPackage] = []

    def block() -> Block:
        out = (tuple(run), {sid: r.key for r in run for sid in ids_of.get(r.key, ())})
        run.clear()
        return out

    for ref in refs:
        if isinstance(ref, packages.JsonlExport):
            if run:
                yield block()
            yield ref
            continue
        run.append(ref)
        if len(run) >= BLOCK_PACKAGES:
            yield block()
    if run:
        yield block()


def parse_all(refs: list, known_ids: dict[str, str], on_progress: Progress | None = None,
              workers: int | None = None) -> Iterator[Parsed]:
    """A skill with its verdicts (None: stored unchanged, no rules run) or an IngestProblem for
    every package and JSONL record, in the order of `refs`. `known_ids` (skill id -> key, as
    stored before this run) is read once, at the start. workers: processes to parse folder
    packages in (default: one a CPU; 1 parses them all in this process)."""
    total = len(refs)
    folders = sum(isinstance(r, packages.FolderPackage) for r in refs)
    workers = worker_count() if workers is None else workers
    if folders < POOL_MIN_PACKAGES:
        workers = 1
    done = 0
    for block, parsed in in_order(_blocks(refs, known_ids), parse_block, workers,
                                  here=lambda b: isinstance(b, packages.JsonlExport)):
        if parsed is None:   # a JSONL export, parsed here by its own pool
            if on_progress:
                on_progress(done, total, str(block.path))
            try:
                yield from jsonl_workers.parse_export(block)
            except OSError as exc:
                yield IngestProblem(source=str(block.path), file=str(block.path), reason=f"cannot read: {exc.strerror}")
            done += 1
            continue
        for ref, item in zip(block[0], parsed):
            if on_progress:
                on_progress(done, total, str(ref.folder))
            done += 1
            yield item
    if on_progress:
        on_progress(total, total, "done")
