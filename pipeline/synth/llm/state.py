"""The real state of a synthesis container, read through a Session: the tree, the heads of text
files, the schemas of data files (CSV/TSV, JSON, SQLite), the versions of installed tools; and
the difference between two such states (what a solution created, changed and deleted).

FACET writes the instruction from the environment as built, and the tests from the states
observed before and after the solution ran, never from what the plan says should be there.
Every read is bounded (entries, bytes per head, heads in all, schema files, seconds), so a
big or odd tree costs a capped prompt and never stops the session.
"""
from __future__ import annotations

import dataclasses
import re
import secrets
import threading
from dataclasses import dataclass, field
from typing import Iterable

from pipeline.synth.llm.data_schemas import SCHEMA_SUFFIXES, SQLITE_MAGIC, FileSchema, read_schemas
from workbench.sandbox.session import Session, SessionStopped, TreeEntry

MAX_ENTRIES = 2000          # per root
HEAD_BYTES = 2048
HEAD_LINES = 20
MAX_HEADS = 60
HEADS_TOTAL_BYTES = 48 * 1024
MAX_SCHEMA_FILES = 30
TOOL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
# Files given no head: binary by their name (others are told by their bytes: NUL, or many bad sequences).
_BINARY_SUFFIXES = (".gz", ".tgz", ".zip", ".zst", ".xz", ".bz2", ".png", ".jpg", ".jpeg", ".gif", ".pdf",
                    ".so", ".o", ".a", ".pyc", ".whl", ".tar", ".db", ".sqlite", ".sqlite3", ".gpg")
# Inside a git repository only what says where it stands is worth a head (not hook samples, logs).
_GIT_HEADS = re.compile(r"/\.git/(?:HEAD|config|packed-refs|refs/.+|hooks/(?!.*\.sample$)[^/]+)$")
_TOOLS_CACHE_MAX = 256
_tools_cache: dict[tuple[str, str], str | None] = {}     # (image id, tool) -> version line; None missing
_tools_lock = threading.Lock()

_TOOLS_SCRIPT = r'''
for t; do
  if ! command -v -- "$t" >/dev/null 2>&1; then printf '%s\tmissing\t\n' "$t"; continue; fi
  v=""
  for flag in --version -V -version version; do
    v=$(timeout -k 1 3 "$t" "$flag" </dev/null 2>&1 | head -n 1; exit "${PIPESTATUS[0]}") && [ -n "$v" ] && break
    v=""
  done
  printf '%s\tfound\t%s\n' "$t" "$(printf '%s' "$v" | tr -d '\t\r' | head -c 160)"
done
'''
# Each head is preceded by a line "<marker> <path>"; the marker is fresh per read, so no file
# content can forge one.
_HEADS_SCRIPT = r'''m=$1; n=$2; shift 2; for f; do printf '\n%s %s\n' "$m" "$f"; head -c "$n" -- "$f" 2>/dev/null; done'''


@dataclass
class ContainerState:
    roots: tuple[str, ...]
    entries: list[TreeEntry]
    heads: dict[str, str] = field(default_factory=dict)     # path -> first lines of a text file
    binary: list[str] = field(default_factory=list)         # files whose head was not text
    schemas: dict[str, FileSchema] = field(default_factory=dict)
    tools: dict[str, str | None] = field(default_factory=dict)   # name -> version line ("" unknown), None missing
    truncated: bool = False                                 # the tree was cut at its cap
    notes: list[str] = field(default_factory=list)          # what was capped or could not be read

    @property
    def files(self) -> dict[str, TreeEntry]:
        return {e.path: e for e in self.entries}

    def exists(self, path: str) -> bool:
        """Whether `path` is in the tree, as an entry or a folder above one."""
        path = path.rstrip("/") or "/"
        return path in self.files or any(e.path.startswith(path + "/") for e in self.entries) or path in self.roots

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def as_prompt(self, max_chars: int = 12000) -> str:
        """Compact text for a prompt: tree, schemas, tools, then heads while room is left."""
        tree_lines = [_entry_line(e) for e in self.entries]
        head = f"## Files under {', '.join(self.roots)} ({len(self.entries)} entries" + \
               (", cut at the cap)" if self.truncated else ")")
        parts = [head, *_fit(tree_lines, int(max_chars * 0.4))]
        if self.schemas:
            parts += ["", "## Data files", *_fit([s.as_line() for s in self.schemas.values()], int(max_chars * 0.2))]
        if self.tools:
            parts += ["", "## Tools", *[f"{t}: {v}" if v else f"{t}: {'MISSING' if v is None else 'installed'}"
                                        for t, v in self.tools.items()]]
        text = "\n".join(parts)
        return _with_heads(text, self.heads, max_chars, "## Heads of text files")


@dataclass
class StateDiff:
    created: list[str]
    modified: list[str]
    deleted: list[str]
    heads: dict[str, str]          # after-heads of created and modified files (those read)
    schemas: dict[str, FileSchema] = field(default_factory=dict)   # after-schemas of changed data files
    truncated: bool = False

    @property
    def changed_paths(self) -> list[str]:
        return sorted({*self.created, *self.modified, *self.deleted})

    def as_prompt(self, max_chars: int = 8000) -> str:
        lines = ["## What changed" + (" (a tree was cut at its cap: changes below it are not seen)" if self.truncated else "")]
        for word, paths in (("created", self.created), ("modified", self.modified), ("deleted", self.deleted)):
            lines += [f"{word}: {p}" for p in paths]
        if not self.changed_paths:
            lines.append("nothing")
        lines += [s.as_line() for s in self.schemas.values()]
        text = "\n".join(_fit(lines, int(max_chars * 0.4)))
        return _with_heads(text, self.heads, max_chars, "## Heads of created and modified files")


def diff_states(before: ContainerState, after: ContainerState) -> StateDiff:
    """Created, modified (kind, size, mode or mtime differ; a folder only by kind or mode, its
    contents speak for it) and deleted paths, with the after-heads of what was created or modified."""
    b, a = before.files, after.files
    created = sorted(p for p in a if p not in b)
    deleted = sorted(p for p in b if p not in a)
    modified = sorted(p for p in a if p in b and _changed(b[p], a[p]))
    touched = set(created) | set(modified)
    return StateDiff(created, modified, deleted, {p: h for p, h in after.heads.items() if p in touched},
                     {p: s for p, s in after.schemas.items() if p in touched},
                     truncated=before.truncated or after.truncated)


def read_state(session: Session, roots: Iterable[str] = ("/app",), tools: Iterable[str] = (),
               timer: dict | None = None, since: ContainerState | None = None) -> ContainerState:
    """The container's state under `roots` (see the module doc). `since`: an earlier state, whose
    changed files get their heads and schemas read first. `timer["docker_s"]` accumulates the
    time this spent waiting on Docker."""
    start = session.docker_s
    try:
        return _read(session, tuple(roots), list(dict.fromkeys(tools)), since)
    finally:
        if timer is not None and timer is not session.timer:
            timer["docker_s"] = timer.get("docker_s", 0.0) + session.docker_s - start


def _read(session: Session, roots: tuple[str, ...], tools: list[str], since: ContainerState | None) -> ContainerState:
    entries: list[TreeEntry] = []
    truncated = False
    for root in roots:
        entries += session.tree(root, max_entries=MAX_ENTRIES)
        truncated = truncated or session.tree_truncated
    state = ContainerState(roots, entries, truncated=truncated)
    if truncated:
        state.notes.append(f"the tree was cut at {MAX_ENTRIES} entries per root (shallowest kept)")
    first = _changed_since(since, entries) if since else set()
    files = [e for e in entries if e.kind == "file" and e.size > 0 and "\n" not in e.path
             and ("/.git/" not in e.path or _GIT_HEADS.search(e.path))]
    files.sort(key=lambda e: (e.path not in first, e.path.count("/"), e.path))
    sqlite_by_magic = _read_heads(session, state, [e for e in files if not e.path.lower().endswith(_BINARY_SUFFIXES)])
    data = [e.path for e in files if e.path.lower().endswith(SCHEMA_SUFFIXES) or e.path in sqlite_by_magic]
    if len(data) > MAX_SCHEMA_FILES:
        state.notes.append(f"schemas read for the first {MAX_SCHEMA_FILES} of {len(data)} data files")
    state.schemas, notes = read_schemas(session, data[:MAX_SCHEMA_FILES], {e.path: e.size for e in files})
    state.notes += notes
    if tools:
        _read_tools(session, state, tools)
    return state


def _changed_since(since: ContainerState, entries: list[TreeEntry]) -> set[str]:
    old = since.files
    return {e.path for e in entries if e.path not in old or _changed(old[e.path], e)}


def _changed(old: TreeEntry, new: TreeEntry) -> bool:
    if old.kind != new.kind or old.mode != new.mode:
        return True
    return new.kind != "dir" and (old.size != new.size or old.mtime != new.mtime)


def _read_heads(session: Session, state: ContainerState, files: list[TreeEntry]) -> set[str]:
    """Heads of `files` into `state` (within the caps); returns the paths that are SQLite files."""
    sqlite: set[str] = set()
    chosen, total = [], 0
    for e in files:
        cost = min(e.size, HEAD_BYTES)
        if len(chosen) >= MAX_HEADS or total + cost > HEADS_TOTAL_BYTES:
            state.notes.append(f"heads read for {len(chosen)} of {len(files)} text files (cap)")
            break
        chosen.append(e.path)
        total += cost
    if not chosen:
        return sqlite
    marker = f"@@head-{secrets.token_hex(8)}@@"
    res = session.exec(["bash", "-c", _HEADS_SCRIPT, "heads", marker, str(HEAD_BYTES), *chosen], 60, workdir="/")
    if res.stopped_by_limit:
        raise SessionStopped(session.stopped or res.container_gone)
    for block in res.output.split("\n" + marker + " ")[1:]:
        path, _, body = block.partition("\n")
        if "\x00" in body or body.count("\ufffd") > max(2, len(body) // 100):
            state.binary.append(path)
            if body.startswith(SQLITE_MAGIC):
                sqlite.add(path)
            continue
        state.heads[path] = "\n".join(body.split("\n")[:HEAD_LINES])
    return sqlite


def _read_tools(session: Session, state: ContainerState, tools: list[str]) -> None:
    """Versions of `tools`, looked up once per image (what a solution does cannot install a tool
    without network, and the state after it is read with the same image)."""
    valid = [t for t in tools if TOOL_NAME.match(t)]
    for t in tools:
        if t not in valid:
            state.tools[t] = None
            state.notes.append(f"tool name {t!r} is not a plain program name; not looked up")
    image = session.image_id
    with _tools_lock:
        known = {t: _tools_cache[(image, t)] for t in valid if image and (image, t) in _tools_cache}
    state.tools.update(known)
    valid = [t for t in valid if t not in known]
    if valid:
        _look_up_tools(session, state, valid)
        if image:
            with _tools_lock:
                if len(_tools_cache) > _TOOLS_CACHE_MAX:
                    _tools_cache.clear()
                _tools_cache.update({(image, t): state.tools[t] for t in valid})
    state.tools = {t: state.tools[t] for t in tools}     # in the order asked


def _look_up_tools(session: Session, state: ContainerState, valid: list[str]) -> None:
    res = session.exec(["bash", "-c", _TOOLS_SCRIPT, "tools", *valid], 30 + 13 * len(valid), workdir="/")
    if res.stopped_by_limit:
        raise SessionStopped(session.stopped or res.container_gone)
    for line in res.output.splitlines():
        name, _, rest = line.partition("\t")
        found, _, version = rest.partition("\t")
        if name in valid:
            state.tools[name] = None if found == "missing" else version.strip()
    for t in valid:
        state.tools.setdefault(t, "")


def _entry_line(e: TreeEntry) -> str:
    if e.kind == "dir":
        return f"{e.path}/"
    if e.kind == "link":
        return f"{e.path} (link)"
    if e.kind == "other":
        return f"{e.path} (special file)"
    return f"{e.path}  {e.size} B" + ("  executable" if e.mode & 0o111 else "")


def _fit(lines: list[str], budget: int) -> list[str]:
    out, used = [], 0
    for i, line in enumerate(lines):
        if used + len(line) + 1 > budget:
            out.append(f"... {len(lines) - i} more not shown")
            break
        out.append(line)
        used += len(line) + 1
    return out


def _with_heads(text: str, heads: dict[str, str], max_chars: int, title: str) -> str:
    if not heads:
        return text[:max_chars]
    parts = [text, "", title]
    used = len(text) + len(title) + 2
    shown = 0
    for path, head in heads.items():
        block = f"--- {path}\n{head}"
        if used + len(block) + 1 > max_chars - 60:
            parts.append(f"... heads of {len(heads) - shown} more files not shown")
            break
        parts.append(block)
        used += len(block) + 1
        shown += 1
    return "\n".join(parts)[:max_chars]
