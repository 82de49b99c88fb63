"""Task bundles in the Harbor layout, and the path rules every bundle passes before use.

A bundle is a mapping of relative POSIX paths to bytes. Nothing is written or built until
every path has been checked: no absolute paths, no `..`, no links, no odd names, and caps
on file count, file size and total size. Bundles are written atomically (a temporary
sibling folder renamed into place), so a killed writer never leaves half a bundle.
"""
from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from workbench.folder_write import write_folder

MAX_FILES = 400
MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_TOTAL_BYTES = 32 * 1024 * 1024
REQUIRED = ("instruction.md", "task.toml", "environment/Dockerfile", "tests/test.sh")
EXECUTABLE_DIRS = ("solution/", "tests/")


class BundleError(ValueError):
    """A bundle that breaks a rule; the message names the path and the rule."""


def check_relpath(path: str) -> str:
    """Return the normalised path or raise BundleError saying what is wrong with it."""
    if not isinstance(path, str) or not path:
        raise BundleError(f"empty path in bundle: {path!r}")
    if "\x00" in path or "\\" in path or any(ord(c) < 32 for c in path):
        raise BundleError(f"path {path!r}: control characters or backslashes are not allowed")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise BundleError(f"path {path!r}: absolute paths are not allowed")
    parts = PurePosixPath(path).parts
    if any(p == ".." for p in parts):
        raise BundleError(f"path {path!r}: '..' is not allowed")
    if any(p in (".", "") for p in path.split("/")):
        raise BundleError(f"path {path!r}: empty or '.' segments are not allowed")
    if len(path) > 240:
        raise BundleError(f"path {path[:60]!r}…: longer than 240 characters")
    return "/".join(parts)


@dataclass
class TaskBundle:
    """The files of one task; `executables` are marked mode 0755 when written."""
    files: dict[str, bytes]
    executables: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.files = {p: (c.encode() if isinstance(c, str) else bytes(c)) for p, c in self.files.items()}

    def validate(self) -> None:
        if len(self.files) > MAX_FILES:
            raise BundleError(f"bundle has {len(self.files)} files; at most {MAX_FILES} are allowed")
        total = 0
        normal = set()
        for path, content in self.files.items():
            norm = check_relpath(path)
            if norm in normal:
                raise BundleError(f"path {path!r}: appears twice")
            normal.add(norm)
            if len(content) > MAX_FILE_BYTES:
                raise BundleError(f"path {path!r}: {len(content)} bytes is over the {MAX_FILE_BYTES}-byte cap")
            total += len(content)
        if total > MAX_TOTAL_BYTES:
            raise BundleError(f"bundle is {total} bytes; the cap is {MAX_TOTAL_BYTES}")
        for req in REQUIRED:
            if req not in normal:
                raise BundleError(f"bundle lacks {req}")
        # A file cannot also be a folder (e.g. 'tests' and 'tests/test.sh').
        for p in normal:
            for parent in PurePosixPath(p).parents:
                if str(parent) in normal:
                    raise BundleError(f"path {p!r}: its parent {str(parent)!r} is a file")

    def text(self, path: str) -> str:
        return self.files[path].decode("utf-8", errors="replace")

    def under(self, prefix: str) -> dict[str, bytes]:
        prefix = prefix.rstrip("/") + "/"
        return {p[len(prefix):]: c for p, c in self.files.items() if p.startswith(prefix)}

    def environment_hash(self) -> str:
        """Content hash of `environment/`: identical environments get one image."""
        return tree_hash(self.under("environment"))

    def content_hash(self) -> str:
        return tree_hash(self.files)


def tree_hash(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        data = files[path]
        h.update(path.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def write_bundle(bundle: TaskBundle, dest: Path) -> Path:
    """Validate, then write atomically to `dest` (replacing an older copy)."""
    bundle.validate()

    def mode_of(path: str) -> int:
        executable = path in bundle.executables or (path.endswith(".sh") and path.startswith(EXECUTABLE_DIRS))
        return 0o755 if executable else 0o644
    return write_folder(Path(dest), bundle.files, mode_of=mode_of)


def read_bundle(root: Path) -> TaskBundle:
    """Read a bundle folder, refusing links, devices and anything over the caps."""
    root = Path(root)
    if not root.is_dir():
        raise BundleError(f"{root}: not a folder")
    files: dict[str, bytes] = {}
    executables: set[str] = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(dirnames + filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                raise BundleError(f"{rel}: links are not allowed in a bundle (points to {os.readlink(full)!r})")
            if stat.S_ISDIR(st.st_mode):
                continue
            if not stat.S_ISREG(st.st_mode):
                raise BundleError(f"{rel}: not a regular file")
            check_relpath(rel)
            if st.st_size > MAX_FILE_BYTES:
                raise BundleError(f"{rel}: {st.st_size} bytes is over the {MAX_FILE_BYTES}-byte cap")
            total += st.st_size
            if total > MAX_TOTAL_BYTES:
                raise BundleError(f"{root}: more than {MAX_TOTAL_BYTES} bytes in all")
            if len(files) >= MAX_FILES:
                raise BundleError(f"{root}: more than {MAX_FILES} files")
            files[rel] = full.read_bytes()
            if st.st_mode & 0o111:
                executables.add(rel)
    bundle = TaskBundle(files, executables)
    bundle.validate()
    return bundle
