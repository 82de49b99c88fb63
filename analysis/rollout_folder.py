"""What a viewer may show of one rollout's folder (runs/<run_id>/rollouts/<rollout_id>/): the
files to download (trajectory, terminal recording, agent log) and the verifier's output, read
with caps.

The folder's path comes from the store and its files from a container or an imported Harbor
job, so both are treated as hostile: a folder outside the workspace, a link, or a file over the
caps is named and not read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

TRAJECTORY = "trajectory.json"
RECORDING = "recording.cast"
AGENT_LOG = "agent.log"
DOWNLOADS = (TRAJECTORY, RECORDING, AGENT_LOG)
VERIFIER_DIR = "verifier"
MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024
MAX_VERIFIER_FILES = 12
MAX_VERIFIER_CHARS = 8_000          # per file shown (its tail: test output ends with the summary)


@dataclass
class VerifierFile:
    name: str                       # relative to the verifier folder
    text: str
    note: str = ""                  # why it is cut or not shown


@dataclass
class RolloutFolder:
    rel: str                        # as stored, relative to the workspace
    path: Path | None = None        # None when it may not be read
    error: str | None = None
    downloads: dict[str, Path] = field(default_factory=dict)     # name -> file, those present and readable
    too_big: dict[str, int] = field(default_factory=dict)        # name -> size, over MAX_DOWNLOAD_BYTES
    verifier: list[VerifierFile] = field(default_factory=list)


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError):
        return False


def _plain_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _tail(path: Path, chars: int) -> tuple[str, str]:
    size = path.stat().st_size
    with open(path, "rb") as fh:
        if size > chars * 4:
            fh.seek(size - chars * 4)
        data = fh.read()
    text = data.decode("utf-8", errors="replace")
    if len(text) > chars or size > len(data):
        return text[-chars:], f"last {chars:,} characters of {size:,} bytes"
    return text, ""


def open_folder(root: Path, rel: str | None) -> RolloutFolder:
    """The rollout folder `rel` under the workspace `root`, as far as it may be shown."""
    out = RolloutFolder(rel=str(rel or ""))
    if not rel:
        out.error = "the rollout has no folder on record"
        return out
    path = root / rel
    if not _inside(root, path) or path.is_symlink():
        out.error = f"{rel}: outside the workspace (or a link); not read"
        return out
    if not path.is_dir():
        out.error = f"{rel}: no such folder (removed, or the rollout was imported without its files)"
        return out
    out.path = path
    for name in DOWNLOADS:
        f = path / name
        if not _plain_file(f):
            continue
        size = f.stat().st_size
        if size > MAX_DOWNLOAD_BYTES:
            out.too_big[name] = size
        else:
            out.downloads[name] = f
    vdir = path / VERIFIER_DIR
    if vdir.is_dir() and not vdir.is_symlink():
        files = sorted(p for p in vdir.rglob("*") if p.is_file() or p.is_symlink())
        for f in files[:MAX_VERIFIER_FILES]:
            name = str(f.relative_to(vdir))
            if f.is_symlink() or not _inside(vdir, f):
                out.verifier.append(VerifierFile(name, "", "a link; not read"))
                continue
            text, note = _tail(f, MAX_VERIFIER_CHARS)
            out.verifier.append(VerifierFile(name, text, note))
        if len(files) > MAX_VERIFIER_FILES:
            out.verifier.append(VerifierFile("…", "", f"{len(files) - MAX_VERIFIER_FILES} more files not shown"))
    return out
