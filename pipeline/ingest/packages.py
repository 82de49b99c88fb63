"""Find skill packages under the paths a user gives, and read them defensively.

Everything a package holds is checked before it is trusted: symlinks that loop or point
outside the corpus, files over the size caps, binary or non-UTF-8 SKILL.md text.
A problem rejects that one package with its file and reason; the others go on.

A SKILL.md below another package's folder is a package of its own (the outer package's files
stop at its folder), unless it sits in that package's templates, examples or test material, or
among installed dependencies: then it is reported with that reason, never silently dropped.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from workbench.models import IngestProblem

SKILL_FILE = "SKILL.md"
MAX_SKILL_MD_BYTES = 1 << 20
MAX_FILE_BYTES = 5 << 20
MAX_PACKAGE_BYTES = 25 << 20
MAX_PACKAGE_FILES = 400
VCS_DIRS = frozenset({".git", ".hg", ".svn"})  # hold no working files: never walked
# Installed dependencies and caches: never a package's files, walked only to report a SKILL.md there.
VENDORED_DIRS = frozenset({"node_modules", "__pycache__", ".venv", "venv", ".tox", "site-packages"})
SKIP_DIRS = VCS_DIRS | VENDORED_DIRS
# Folders in which a package keeps material that merely looks like a package: a skill-creator's
# template, a worked example, a test fixture or golden output. Matched on whole folder names
# (lower case) between the outer package and the nested SKILL.md, or on words in them.
TEMPLATE_DIRS = frozenset({"examples", "example", "templates", "template", "samples", "sample",
                           "fixtures", "fixture", "__fixtures__", "testdata", "test-data", "test_data",
                           "tests", "test", "__tests__", "golden", "snapshots", "__snapshots__",
                           "boilerplate", "skeleton", "scaffold", "scaffolds", "assets"})
_TEMPLATE_WORD = re.compile(r"(?:^|[-_.])(?:templates?|examples?|samples?|fixtures?|skeleton|boilerplate)(?:$|[-_.])")


class PackageError(Exception):
    def __init__(self, file: Path | str, reason: str):
        super().__init__(f"{file}: {reason}")
        self.file = str(file)
        self.reason = reason


@dataclass(frozen=True)
class FolderPackage:
    folder: Path
    root: Path               # the corpus: nothing of the package may point outside it
    source_ref: str | None
    key_root: Path | None = None  # where keys start when not at root (a package given itself)

    @property
    def key(self) -> str:
        rel = self.folder.relative_to(self.key_root or self.root).as_posix()
        return rel if rel != "." else self.folder.name


@dataclass(frozen=True)
class JsonlExport:
    path: Path
    root: Path

    @property
    def key_prefix(self) -> str:
        try:
            return self.path.relative_to(self.root).as_posix()
        except ValueError:
            return self.path.name


def git_commit(folder: Path) -> str | None:
    """The checked-out commit when the folder is inside a git work tree."""
    try:
        out = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _is_skill_file(name: str) -> bool:
    return name.lower() == "skill.md"


def _check_link(path: Path, root: Path) -> Path:
    """Resolve a symlink, refusing loops and targets outside the corpus root."""
    try:
        target = path.resolve(strict=True)
    except RuntimeError:
        raise PackageError(path, "symlink loop") from None
    except OSError as exc:
        raise PackageError(path, f"broken symlink ({exc.strerror or exc})") from None
    if not target.is_relative_to(root):
        raise PackageError(path, f"symlink points outside the corpus, to {target}")
    return target


def nested_reason(folder: Path, outer: Path) -> str | None:
    """Why the SKILL.md folder `folder`, found below the package folder `outer`, is not a
    package of its own; None when it is one."""
    for part in folder.relative_to(outer).parts:
        low = part.lower()
        if low in VENDORED_DIRS:
            return f"SKILL.md inside {part}/ (installed dependencies) of package {outer.name}, not a package of this corpus"
        if low in TEMPLATE_DIRS or _TEMPLATE_WORD.search(low):
            return (f"SKILL.md in the {part}/ folder of package {outer.name} is a template, example or "
                    "test material of that package, not a package of its own (it stays one of its files)")
    return None


def _vendored_reason(folder: Path, root: Path) -> str | None:
    for part in folder.relative_to(root).parts:
        if part.lower() in VENDORED_DIRS:
            return f"SKILL.md inside {part}/ (installed dependencies), not a package of this corpus"
    return None


def _has_skill_file(names: list[str]) -> bool:
    return any(_is_skill_file(f) for f in names)


def discover(paths: list[Path]) -> tuple[list[FolderPackage | JsonlExport], list[IngestProblem]]:
    found: list[FolderPackage | JsonlExport] = []
    problems: list[IngestProblem] = []
    for given in paths:
        given = Path(given).expanduser()
        if not given.exists() and not given.is_symlink():
            problems.append(IngestProblem(source=str(given), file=str(given), reason="path does not exist"))
            continue
        root = given.resolve()
        if root.is_file():
            if root.suffix == ".jsonl":
                found.append(JsonlExport(root, root.parent))
            elif _is_skill_file(root.name):
                found.append(FolderPackage(root.parent, root.parent.parent, git_commit(root.parent)))
            else:
                problems.append(IngestProblem(source=str(given), file=str(given),
                                              reason="not a skill folder, SKILL.md or .jsonl export"))
            continue
        found_here, problems_here = _walk(root, git_commit(root))
        found += found_here
        problems += problems_here
        if not found_here and not problems_here:
            problems.append(IngestProblem(source=str(given), file=str(given),
                                          reason="no SKILL.md or .jsonl export found under this path"))
    return found, problems


def _exports(here: Path, names: list[str], root: Path, problems: list[IngestProblem]) -> list[JsonlExport]:
    """The .jsonl files a walk meets that may be skill exports; other data is reported once."""
    from pipeline.ingest.jsonl_export import not_an_export  # it reads records with this module's caps
    out = []
    for name in names:
        if reason := not_an_export(here / name):
            problems.append(IngestProblem(source=str(here / name), file=str(here / name), reason=reason))
        else:
            out.append(JsonlExport(here / name, root))
    return out


def _walk(root: Path, ref: str | None) -> tuple[list[FolderPackage | JsonlExport], list[IngestProblem]]:
    """Every SKILL.md folder under root, nested ones included, and .jsonl exports outside packages."""
    found: list[FolderPackage | JsonlExport] = []
    problems: list[IngestProblem] = []
    outer_of: dict[Path, Path] = {}  # folder -> the outermost package folder above or at it
    # A package given itself keys its nested packages under its own name ("kit/skills/x").
    key_root = root.parent if _has_skill_file(os.listdir(root)) else None
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames.sort()
        for d in list(dirnames):
            p = here / d
            if d in VCS_DIRS:
                dirnames.remove(d)
            elif p.is_symlink():
                dirnames.remove(d)  # content inside the root is reached by the walk itself
                try:
                    _check_link(p, root)
                except PackageError as exc:
                    problems.append(IngestProblem(source=str(here), file=exc.file, reason=exc.reason))
        outer = outer_of.get(here.parent) if here != root else None
        vendored = _vendored_reason(here, root)
        if _has_skill_file(filenames):
            skill_file = here / next(f for f in sorted(filenames) if _is_skill_file(f))
            reason = vendored or (nested_reason(here, outer) if outer is not None else None)
            if reason:
                problems.append(IngestProblem(source=str(here), file=str(skill_file), reason=reason))
            else:
                found.append(FolderPackage(here, root, ref, key_root))
            outer = outer or here
        if outer is not None:
            outer_of[here] = outer
        elif vendored is None:  # a package's .jsonl files are its files, not exports
            found += _exports(here, sorted(f for f in filenames if f.endswith(".jsonl")), root, problems)
    return found, problems


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def decode_text(data: bytes, file: Path | str) -> str:
    if b"\0" in data[:8192]:
        raise PackageError(file, "binary file, not Markdown text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PackageError(file, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}") from None


def _is_own_package(folder: Path, outer: Path) -> bool:
    try:
        names = os.listdir(folder)
    except OSError:
        return False  # the walk below reports what cannot be read
    return _has_skill_file(names) and nested_reason(folder, outer) is None


def read_folder(pkg: FolderPackage) -> tuple[str, list[str], str]:
    """(SKILL.md text, package file list, content hash) or PackageError."""
    skill_path = next(pkg.folder / f for f in os.listdir(pkg.folder) if _is_skill_file(f))
    if skill_path.is_symlink():
        _check_link(skill_path, pkg.root)
    size = skill_path.stat().st_size
    if size > MAX_SKILL_MD_BYTES:
        raise PackageError(skill_path, f"SKILL.md is {size / 1e6:.1f} MB, over the 1 MiB limit")
    text = decode_text(skill_path.read_bytes(), skill_path)
    files: list[tuple[str, str]] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(pkg.folder, followlinks=False):
        here = Path(dirpath)
        for d in list(dirnames):
            if (here / d).is_symlink():
                _check_link(here / d, pkg.root)
                dirnames.remove(d)
            elif d in SKIP_DIRS or _is_own_package(here / d, pkg.folder):
                dirnames.remove(d)  # a nested package's files are its own, not this one's
        for f in sorted(filenames):
            p = here / f
            if p.is_symlink():
                p = _check_link(p, pkg.root)
            if not p.is_file():
                raise PackageError(here / f, "not a regular file")
            size = p.stat().st_size
            if size > MAX_FILE_BYTES:
                raise PackageError(here / f, f"file is {size / 1e6:.1f} MB, over the 5 MiB per-file limit")
            total += size
            if total > MAX_PACKAGE_BYTES:
                raise PackageError(pkg.folder, "package is over the 25 MiB limit")
            files.append(((here / f).relative_to(pkg.folder).as_posix(), _file_digest(p)))
            if len(files) > MAX_PACKAGE_FILES:
                raise PackageError(pkg.folder, f"package has over {MAX_PACKAGE_FILES} files")
    files.sort()
    h = hashlib.sha256()
    for rel, digest in files:
        h.update(f"{rel}\0{digest}\n".encode())
    return text, [rel for rel, _ in files], h.hexdigest()
