"""A skill's package as it travels with a task: its text files, bounded, read once in the driver.

The package is read from the folder it was ingested from (`skills.source_path`, the files listed in
`skills.package_files`) when the batch gathers its paths, so a Ray worker needs no shared disk. A
package whose SKILL.md no longer matches the stored text changed on disk after ingest: it is not
used (its files would not be the skill that was curated), and only the stored SKILL.md ships.
Everything here is hostile input: no links, nothing outside the folder, no binaries, caps on count
and size.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

MAX_PACKAGE_FILES = 60
MAX_PACKAGE_BYTES = 384 * 1024
MAX_FILE_BYTES = 128 * 1024
SKILLS_ROOT = "/skills"                      # where packages sit in a task's environment (read-only)
# Under tests/: the pristine code of shipped packages that the tests run. Public by definition (the same
# files ship in environment/skills/), so the rubric's "no test file in the environment" rule skips it.
SKILL_REF_DIR = "tests/skill_ref/"
_SAFE_PART = re.compile(r"^[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,80}$")   # no dot files, no spaces


@dataclass(frozen=True)
class SkillPackage:
    """The files of one skill package (relative POSIX path -> bytes), SKILL.md first."""
    slug: str                                        # its folder name under /skills
    files: tuple[tuple[str, bytes], ...] = ()
    note: str = ""                                   # why files are missing (changed on disk, over a cap)

    def text(self, rel: str) -> str | None:
        for p, data in self.files:
            if p == rel:
                return data.decode("utf-8", "replace")
        return None

    def names(self) -> list[str]:
        return [p for p, _ in self.files]

    @property
    def root(self) -> str:
        return f"{SKILLS_ROOT}/{self.slug}"


def package_slug(name: str, skill_id: str) -> str:
    """A folder name for the skill: its name in kebab case (the id's head when it has none)."""
    s = re.sub(r"[^a-z0-9]+", "-", (name or "").lower()).strip("-")[:48].strip("-")
    return s or f"skill-{skill_id[:10]}"


def _is_text(data: bytes) -> bool:
    if b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_package(source_path: str, package_files: list[str], raw_text: str, *, name: str, skill_id: str
                 ) -> SkillPackage:
    """The package's text files within the caps; SKILL.md is always the stored text."""
    slug = package_slug(name, skill_id)
    files: list[tuple[str, bytes]] = [("SKILL.md", (raw_text or "").encode())]
    root = Path(source_path) if source_path else None
    if root is None or not root.is_dir():
        return SkillPackage(slug, tuple(files), "the package folder is gone: only SKILL.md ships")
    try:
        on_disk = (root / "SKILL.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        on_disk = None
    if on_disk is None or on_disk.replace("\r\n", "\n").strip() != (raw_text or "").replace("\r\n", "\n").strip():
        return SkillPackage(slug, tuple(files), "the package changed on disk since ingest: only SKILL.md ships")
    real_root = os.path.realpath(root)
    total, notes = len(files[0][1]), []
    for rel in sorted(package_files or (), key=lambda p: (p.count("/"), p)):
        if rel == "SKILL.md" or len(files) >= MAX_PACKAGE_FILES:
            if rel != "SKILL.md":
                notes.append(f"over {MAX_PACKAGE_FILES} files")
                break
            continue
        parts = rel.split("/")
        if not all(_SAFE_PART.match(p) for p in parts) or ".." in parts:
            continue
        path = root / rel
        try:
            if path.is_symlink() or not path.is_file() or \
                    not os.path.realpath(path).startswith(real_root + os.sep):
                continue
            if path.stat().st_size > MAX_FILE_BYTES or total + path.stat().st_size > MAX_PACKAGE_BYTES:
                notes.append(f"{rel} left out (size caps)")
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if _is_text(data):
            files.append((rel, data))
            total += len(data)
    return SkillPackage(slug, tuple(files), "; ".join(dict.fromkeys(notes)))
