"""Export accepted tasks as a Harbor dataset folder: `out/<slug>/` per task.

Harbor needs no manifest for a local dataset: `harbor run -p OUT` treats `OUT` as one
task when `OUT/task.toml` exists, otherwise as a dataset whose tasks are the sub-folders
that pass `Task.is_valid_dir` (others are skipped silently, so every bundle is validated
here before it is written). `dataset.toml` exists only for publishing to Harbor's
registry, so none is written. `<slug>` is the part of the task name after "/"
(`workbench/csv-sum-3f2a` → `csv-sum-3f2a`).

Every bundle is read back through `read_bundle` (no links, no odd paths, size caps) and
its `task.toml` parsed before anything is written; each one is written atomically with
`write_bundle`, and only ever to a direct child of `out`.

No accepted task is left behind silently: task names carry the task id, and where two
names still give one folder (tasks made before that, or a hand-edited store) the second
folder gets the task id appended (`renamed_from` says so). A task that cannot be
exported at all is in `left_behind`, and `workbench export` exits non-zero for it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from workbench.sandbox.bundle import BundleError, check_relpath, read_bundle, write_bundle
from workbench.sandbox.task_toml import parse as parse_task_toml
from workbench.store.task_events import withdrawal
from workbench.store.tasks import accepted_tasks, task_verdict
from workbench.workspace import Workspace


@dataclass(frozen=True)
class ExportedTask:
    task_id: str
    name: str
    slug: str
    path: Path
    renamed_from: str | None = None   # the folder its name gives, taken by another task


@dataclass(frozen=True)
class SkippedTask:
    task_id: str
    reason: str


@dataclass
class ExportReport:
    out: Path
    exported: list[ExportedTask] = field(default_factory=list)
    skipped: list[SkippedTask] = field(default_factory=list)
    left_behind: list[SkippedTask] = field(default_factory=list)   # accepted, yet not exported

    @property
    def slugs(self) -> list[str]:
        return [e.slug for e in self.exported]

    def summary(self) -> str:
        text = f"exported {len(self.exported)} task(s) to {self.out}"
        if self.skipped:
            text += f"; skipped {len(self.skipped)}: " + "; ".join(f"{s.task_id}: {s.reason}" for s in self.skipped)
        if self.left_behind:
            text += f"; {len(self.left_behind)} ACCEPTED task(s) NOT exported"
        return text


def slug_of(name: str) -> str:
    """`org/name` → `name`, refused unless it is one safe path segment."""
    slug = name.split("/", 1)[1] if "/" in name else name
    if not slug or "/" in slug or slug.startswith(".") or check_relpath(slug) != slug:
        raise BundleError(f"task name {name!r} gives no usable folder name")
    return slug


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def _free_folder(slug: str, task_id: str, taken: dict[str, str], reserved: set[str]) -> str:
    """`slug`, or where another task of this export has it, `slug-<task id>` (never a
    folder that another task's own name gives: `reserved`)."""
    if slug not in taken:
        return slug
    for n in range(1, 100):
        candidate = f"{slug}-{task_id[:8]}" + (f"-{n}" if n > 1 else "")
        if candidate not in taken and candidate not in reserved and check_relpath(candidate) == candidate:
            return candidate
    raise BundleError(f"folder {slug!r} is already taken by task {taken[slug]}, and so is every fallback name")


def export_harbor(ws: Workspace, out: Path, task_ids: list[str] | None = None) -> ExportReport:
    """Copy accepted tasks (all of them, or those in `task_ids`) to `out/<slug>/`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    out_root = out.resolve()
    ws_root = Path(ws.root).resolve()
    report = ExportReport(out=out_root)

    accepted = accepted_tasks(ws.db)
    rows = {r.task_id: r for r in accepted.itertuples(index=False)}
    # by name, then id: which of two same-named tasks keeps the plain folder is stable
    wanted = (sorted(rows, key=lambda t: (str(rows[t].name), t)) if task_ids is None
              else list(dict.fromkeys(task_ids)))
    seen_slugs: dict[str, str] = {}
    reserved: set[str] = set()
    for task_id in wanted:
        if task_id in rows:
            try:
                reserved.add(slug_of(str(rows[task_id].name)))
            except BundleError:
                pass   # reported when that task comes up

    for task_id in wanted:
        row = rows.get(task_id)
        if row is None:
            verdict = task_verdict(ws.db, task_id)
            reason = "unknown task" if verdict is None else f"not accepted (verdict: {verdict})"
            if verdict == "accepted" and (w := withdrawal(ws.db, task_id)):
                reason = f"withdrawn from the accepted set by {w['source']}: {w['reason']}"
            report.skipped.append(SkippedTask(task_id, reason))
            continue
        try:
            src = (ws_root / str(row.bundle_dir)).resolve()
            if not _inside(src, ws_root):
                raise BundleError(f"bundle folder {row.bundle_dir!r} lies outside the workspace")
            bundle = read_bundle(src)
            cfg = parse_task_toml(bundle.text("task.toml"), where=f"{row.bundle_dir}/task.toml")
            if cfg.name != row.name:
                raise BundleError(f"task.toml names {cfg.name!r} but the store has {row.name!r}")
            wanted_slug = slug_of(cfg.name)
            slug = _free_folder(wanted_slug, task_id, seen_slugs, reserved)
            dest = out / slug
            if dest.is_symlink():
                raise BundleError(f"{dest} is a link; refusing to write through it")
            if not _inside(dest.resolve(), out_root) or dest.resolve().parent != out_root:
                raise BundleError(f"{dest} would lie outside {out_root}")
            write_bundle(bundle, dest)
        except (BundleError, ValueError, OSError) as exc:
            report.skipped.append(SkippedTask(task_id, str(exc)))
            report.left_behind.append(report.skipped[-1])
            continue
        seen_slugs[slug] = task_id
        report.exported.append(ExportedTask(task_id, cfg.name, slug, out_root / slug,
                                            renamed_from=wanted_slug if slug != wanted_slug else None))
    return report
