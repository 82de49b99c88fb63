"""The typed values that flow between steps, and the contract every recipe family follows.

A task is a chain of steps; each step reads one `Artifact` (what the previous step left on
disk) and leaves another. The synthesizer never runs anything: it keeps a Python model of
each artifact's *meaning* (table rows, lines, file names) so the next recipe can compute
its expected values. Tests downstream compare meaning, not bytes, because an agent may
format a correct CSV or JSON file differently from the oracle; anything that depends on
exact bytes (checksums, sizes) is recomputed by the test from the files themselves.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from typing import Callable

KINDS = ("records", "lines", "tree", "archive")


class SynthesisError(RuntimeError):
    """No recipe chain fits the path (the composer retries with another draw before giving up)."""
SAFE_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@:/+-]*$")


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    types: tuple[str, ...]                  # "str" | "int" | "float" per column
    rows: tuple[tuple, ...]

    def col(self, name: str) -> list:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def type_of(self, name: str) -> str:
        return self.types[self.columns.index(name)]

    def numeric(self) -> list[str]:
        return [c for c, t in zip(self.columns, self.types) if t in ("int", "float")]

    def groupable(self, lo: int = 2, hi: int = 8) -> list[str]:
        """Columns with a few repeated values: what a GROUP BY is natural on."""
        out = []
        for c, t in zip(self.columns, self.types):
            if t == "float":
                continue
            vals = self.col(c)
            n = len(set(vals))
            if lo <= n <= hi and n < len(vals):
                out.append(c)
        return out

    def key_column(self) -> str | None:
        """A text column whose values are unique tokens (an id)."""
        for c, t in zip(self.columns, self.types):
            vals = self.col(c)
            if t == "str" and len(set(vals)) == len(vals) and all(SAFE_TOKEN.match(str(v)) for v in vals):
                return c
        return None


@dataclass(frozen=True)
class Artifact:
    """What one step leaves for the next: its kind, where it is, and what it means."""
    kind: str                                     # one of KINDS
    path: str                                     # absolute path in the container (file or folder)
    fmt: str = ""                                 # records: csv|tsv|json|jsonl; lines: txt; archive: tar.gz|...
    table: Table | None = None
    lines: tuple[str, ...] = ()
    files: tuple[tuple[str, bytes], ...] = ()     # tree / archive members: (relative path, content)
    flavor: str = ""                              # what the content is: access-log, app-log, urls, ...
    exact: bool = True                            # False when the bytes depend on how an agent wrote them
    label: str = "data"                           # a short noun used in names ("orders", "tickets")

    @property
    def is_dir(self) -> bool:
        return self.kind == "tree"

    @property
    def basename(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    def names(self) -> list[str]:
        return sorted(p for p, _ in self.files)

    def count(self) -> int:
        """Records, lines or files: the size a config or report can cite."""
        if self.kind == "records":
            return len(self.table.rows)
        if self.kind == "lines":
            return len(self.lines)
        return len(self.files)

    def moved(self, path: str, **changes) -> "Artifact":
        return replace(self, path=path, **changes)


def describe(a: Artifact) -> str:
    """How the instruction names an artifact: its path and its format, never its content."""
    p = f"`{a.path}`"
    if a.kind == "records":
        cols = ", ".join(f"`{c}`" for c in a.table.columns)
        return {"csv": f"{p} (CSV with a header row; columns {cols})",
                "tsv": f"{p} (tab-separated with a header row; columns {cols})",
                "json": f"{p} (a JSON array of objects with the keys {cols})",
                "jsonl": f"{p} (JSON Lines, one object per line with the keys {cols})"}[a.fmt]
    if a.kind == "lines":
        what = {"access-log": "a web server access log in combined log format",
                "app-log": "an application log", "urls": "one URL per line",
                "requirements": "a pinned requirements file", "crontab": "a crontab",
                "env": "a KEY=value environment file"}.get(a.flavor, "a text file")
        return f"{p} ({what})"
    if a.kind == "tree":
        return f"the folder {p}"      # never its file count: that is a previous step's result
    return f"the archive {p}"


@dataclass
class Check:
    """One requirement sentence and the tests that check it (their docstring is the sentence)."""
    sentence: str
    tests: list[tuple[str, str]]                 # (short name, body source without the def line)

    def __post_init__(self) -> None:
        s = self.sentence
        if "\\" in s or '"""' in s or "\n" in s or not s.endswith("."):
            raise ValueError(f"requirement sentence not usable as a docstring: {s!r}")
        if ". " in s.rstrip(".") or "? " in s or "! " in s:
            raise ValueError(f"requirement must be one sentence: {s!r}")


@dataclass
class Fragment:
    """What one recipe adds to the task for its step."""
    title: str
    intro: str                                    # context; checked by nothing
    checks: list[Check]
    solve: str                                    # bash, run from /app
    output: Artifact


class StepContext:
    """Per-task state shared by the steps: the random source, input files, used paths."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.env: dict[str, bytes] = {}           # relative to environment/app/
        self.executables: set[str] = set()
        self.docker_run: list[str] = []
        self.used: set[str] = set()
        self.index = 0                            # 1-based step number while building
        self.skill = ""                           # the path step's skill name (for context)
        self.skill_tools: frozenset[str] = frozenset()   # the step's skill's tools, for a family that can
                                                         # choose among equivalent commands
        self.fidelity: list = []                  # pipeline.synth.skill_fit.StepFidelity per built step
        self.packages: dict = {}                  # slug -> pipeline.synth.exercise.package.SkillPackage to ship
        self.test_files: dict[str, bytes] = {}    # bundle path under tests/ -> bytes (pristine skill code)
        self.exercise_gaps: list[str] = []        # "<skill>: why no step exercises it"

    def clone(self) -> "StepContext":
        """A copy for dry runs (the adapter search), so trying a route changes nothing."""
        c = StepContext(random.Random())
        c.rng.setstate(self.rng.getstate())
        c.env, c.executables, c.docker_run = dict(self.env), set(self.executables), list(self.docker_run)
        c.used, c.index, c.skill, c.skill_tools = set(self.used), self.index, self.skill, self.skill_tools
        c.packages, c.test_files = dict(self.packages), dict(self.test_files)
        return c

    def pick(self, options: list, tools_of: dict) -> object:
        """One of `options` (sorted, drawn by the task's rng), preferring those whose commands
        (`tools_of[option]`, a set) the step's skill runs most of: an xz skill gets the tar.xz variant.
        One draw either way, so a path without skill tools gets what plain `rng.choice` gives."""
        options = sorted(options)
        shared = {o: len(set(tools_of.get(o, ())) & self.skill_tools) for o in options}
        best = max(shared.values(), default=0)
        return self.rng.choice([o for o in options if shared[o] == best] if best else options)

    def claim(self, path: str) -> str:
        """A fresh absolute path: later steps never overwrite what earlier ones made."""
        if path not in self.used and not any(path.startswith(u + "/") or u.startswith(path + "/") for u in self.used):
            self.used.add(path)
            return path
        stem, dot, ext = path.rpartition(".")
        if "/" in ext or not dot:
            stem, ext, dot = path, "", ""
        for n in range(2, 100):
            cand = f"{stem}-{n}{dot}{ext}"
            if cand not in self.used and not any(cand.startswith(u + "/") or u.startswith(cand + "/") for u in self.used):
                self.used.add(cand)
                return cand
        raise SynthesisError(f"no free path near {path}: it lies inside a folder an earlier step owns")

    def add_input(self, path: str, content: bytes | str, executable: bool = False) -> str:
        """Place a generated input file at absolute `path` (under /app)."""
        assert path.startswith("/app/"), path
        data = content.encode() if isinstance(content, str) else content
        rel = path[len("/app/"):]
        self.env[rel] = data
        if executable:
            self.executables.add(rel)
        self.used.add(path)
        return path


@dataclass
class Recipe:
    """A family of tasks for one category: what it accepts, how it seeds, how it builds."""
    name: str
    category: str
    title: str
    accepts: Callable[[Artifact], bool]
    seed: Callable[[StepContext], Artifact]
    build: Callable[[StepContext, Artifact], Fragment]
    weight: int = 1                               # difficulty contribution
    universal: bool = False                       # accepts any artifact (a sink / relocation)
    consumes: str = ""                            # human summary for the docs
    # What the family works with beyond what a dry build on its seed shows (the commands of its
    # solution, the kinds of its input and output): state kinds of pipeline.artifacts.vocabulary
    # (a database, a repository, file modes) and commands only some draws run. Matched against
    # a skill's tools and kinds when the composer picks a family for a step (pipeline.synth.skill_fit).
    tools: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()


REGISTRY: dict[str, Recipe] = {}
ADAPTERS: dict[str, Recipe] = {}


def register(recipe: Recipe, adapter: bool = False) -> Recipe:
    target = ADAPTERS if adapter else REGISTRY
    if recipe.name in target:
        raise ValueError(f"recipe {recipe.name} registered twice")
    target[recipe.name] = recipe
    return recipe


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "data"


EXTENSIONS = (".tar.gz", ".tar.xz", ".tar.bz2", ".tgz", ".csv", ".tsv", ".jsonl", ".json", ".txt", ".log", ".zip",
              ".db", ".env", ".cron", ".crontab")


def full_stem(a: Artifact) -> str:
    """The artifact's file name without its (known) extension."""
    base = a.basename
    for ext in EXTENSIONS:
        if base.endswith(ext):
            return base[: -len(ext)]
    return base


def stem_of(a: Artifact) -> str:
    """A short stem for naming derived files."""
    base = full_stem(a)
    # Names grow a suffix per step ("orders_filtered_by_region_..."); keep them readable.
    sep = "_" if "_" in base else "-"
    parts = base.split(sep)
    return sep.join(parts[:2] + parts[-1:]) if len(parts) > 3 else base
