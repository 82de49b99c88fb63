"""How well a recipe family fits a path step's skill, and what a built step really uses of it.

A skill is known by what its SKILL.md runs (tools) and the kinds of state it reads and writes
(`pipeline.artifacts`). A family is known by the commands its solution runs and the kinds of
the artifacts it reads and leaves (derived from a dry build on its own seed) plus the state
kinds it declares (`Recipe.kinds`). The composer picks among the families that share a tool
or a kind with the skill; a skill with evidence and no such family gets no substitute.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from .recipes.base import Artifact, Recipe, StepContext, SynthesisError

# Shell plumbing every solution and most skills use: it says nothing about what a skill is for.
PLUMBING = frozenset("""
    bash sh cd echo printf cat ls mkdir cp mv rm rmdir touch ln set export unset test [ true false exit
    read source . eval exec local declare return sleep sudo su env which command type pwd basename dirname
    tee head tail xargs date wait trap shift break continue if then else elif fi for while until do done
    case esac function time nohup apt apt-get brew yum dnf pacman snap npx open clear cls
""".split())
SHELL_WORDS = frozenset("if then else elif fi for while until do done case esac function in time !".split())
# Weak evidence: a general-purpose interpreter matches nearly every family that scripts in it.
WEAK_TOOLS = frozenset({"python3", "python", "pip", "pip3", "node", "perl"})
ALIASES = {"python": "python3", "pip3": "pip", "gawk": "awk", "mawk": "awk", "gunzip": "gzip", "zcat": "gzip",
           "bunzip2": "bzip2", "unxz": "xz", "xzcat": "xz", "unzstd": "zstd", "zstdcat": "zstd",
           "egrep": "grep", "fgrep": "grep", "sqlite": "sqlite3", "gpg2": "gpg", "unzip": "zip"}


def canonical_tool(name: str) -> str:
    name = name.strip().lower().rsplit("/", 1)[-1]
    return ALIASES.get(name, name)


@dataclass(frozen=True)
class SkillParts:
    """What the synthesizer knows of a path step's skill beyond its category."""
    tools: tuple[str, ...] = ()        # binaries the skill runs (canonical names)
    consumes: tuple[str, ...] = ()     # state kinds it reads (pipeline.artifacts.vocabulary)
    produces: tuple[str, ...] = ()     # state kinds it leaves
    steps: tuple[str, ...] = ()
    body: str = ""

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(self.consumes) | frozenset(self.produces)

    @property
    def evidence_tools(self) -> frozenset[str]:
        """Tools that say what the skill does (plumbing left out)."""
        return frozenset(t for t in self.tools if t not in PLUMBING)

    @property
    def has_evidence(self) -> bool:
        return bool(self.evidence_tools or self.kinds)

    def needs(self) -> str:
        """'<tools>; <kinds>' for a no-recipe report."""
        parts = []
        if self.evidence_tools:
            parts.append("tools " + ", ".join(sorted(self.evidence_tools)))
        if self.kinds:
            parts.append("state kinds " + ", ".join(sorted(self.kinds)))
        return "; ".join(parts) or "nothing recognisable"


_ALLOWED_BASH = re.compile(r"^Bash\(([A-Za-z0-9_.+-]+)")   # allowed-tools: Bash(zstd:*)


def parts_from_skill(raw_text: str, *, bins=(), tools=(), inputs=(), outputs=(), steps=()) -> SkillParts:
    """A stored skill's parts: the tools it names or runs and the state kinds its SKILL.md
    reads and leaves (pipeline.artifacts.extract reads the whole text)."""
    from pipeline.artifacts.extract import extract
    arts = extract(raw_text or "", bins=tuple(bins or ()), inputs=tuple(inputs or ()), outputs=tuple(outputs or ()))
    named = [b for b in (bins or ())] + [m.group(1) for t in (tools or ()) if (m := _ALLOWED_BASH.match(t))]
    names = dict.fromkeys(canonical_tool(t) for t in [*arts.tools, *named] if t)
    return SkillParts(tools=tuple(names), consumes=tuple(dict.fromkeys(a.kind for a in arts.consumes)),
                      produces=tuple(dict.fromkeys(a.kind for a in arts.produces)),
                      steps=tuple(steps or ()), body=raw_text or "")


class NoRecipeError(SynthesisError):
    """A step's skill names tools or state kinds that no offline family works with."""

    def __init__(self, skill_name: str, parts: SkillParts):
        self.skill_name, self.parts = skill_name, parts
        super().__init__(f"no offline recipe for {skill_name}: needs {parts.needs()}")


# ---------------------------------------------------------------- what a solution runs
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1[^\n]*\n.*?\n\s*\2\s*(?=\n|$)", re.S)
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_SEPARATORS = re.compile(r"\|\||&&|[|;&(){}`\n]|\$\(")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIXES = frozenset({"sudo", "env", "time", "exec", "nohup", "command", "xargs", "then", "do", "else", "!"})


def solution_commands(solve: str) -> set[str]:
    """The commands a bash solution runs (canonical names): the first word of every simple
    command, heredoc bodies and quoted strings left out (a jq program's `map` is no command)."""
    text = re.sub(r"(?m)#.*$", "", _HEREDOC.sub("\n", solve))
    text = _QUOTED.sub(" Q ", text)
    out: set[str] = set()
    for segment in _SEPARATORS.split(text):
        words = segment.split()
        while words and (words[0] in _PREFIXES or _ASSIGNMENT.match(words[0]) or words[0].startswith("-")):
            words = words[1:]
        if words and re.fullmatch(r"[A-Za-z][A-Za-z0-9_.+-]*", words[0]) and words[0] not in SHELL_WORDS:
            out.add(canonical_tool(words[0]))
    return out


# ---------------------------------------------------------------- what an artifact is, as state kinds
RECORD_KINDS = {"csv": "csv-table", "tsv": "csv-table", "json": "json-document", "jsonl": "jsonl-records"}
LINE_KINDS = {"access-log": "log-file", "app-log": "log-file", "crontab": "cron-schedule",
              "requirements": "dependency-manifest", "env": "config-file"}
ARCHIVE_KINDS = {"zip": ("zip-archive",), "tar.gz": ("tar-archive", "compressed-file"),
                 "tar.xz": ("tar-archive", "compressed-file"), "tar.bz2": ("tar-archive", "compressed-file")}


def artifact_kinds(a: Artifact | None) -> set[str]:
    if a is None:
        return set()
    if a.kind == "records":
        return {RECORD_KINDS.get(a.fmt, "csv-table")}
    if a.kind == "lines":
        return {LINE_KINDS.get(a.flavor, "text-file")}
    if a.kind == "tree":
        return {"directory-tree"}
    return set(ARCHIVE_KINDS.get(a.fmt, ("tar-archive",)))


# ---------------------------------------------------------------- a family's profile and its fit
@dataclass(frozen=True)
class FamilyProfile:
    tools: frozenset[str]
    kinds: frozenset[str]


_PROFILES: dict[str, FamilyProfile] = {}


def _seed_profile(recipe: Recipe) -> FamilyProfile:
    """Tools and kinds of a dry build on the family's own seed, plus what it declares."""
    tools, kinds = set(recipe.tools), set(recipe.kinds)
    try:
        ctx = StepContext(random.Random(f"profile|{recipe.name}"))
        ctx.index = 1
        art = recipe.seed(ctx)
        frag = recipe.build(ctx, art)
        tools |= solution_commands(frag.solve)
        kinds |= artifact_kinds(art) | artifact_kinds(frag.output)
    except (SynthesisError, TypeError, AttributeError):
        pass   # a sink family with no seed of its own: its declaration is all there is
    return FamilyProfile(frozenset(t for t in tools if t not in PLUMBING), frozenset(kinds))


def profile(recipe: Recipe) -> FamilyProfile:
    """Cached per family name (a family's seed and build never change within a process)."""
    if recipe.name not in _PROFILES:
        _PROFILES[recipe.name] = _seed_profile(recipe)
    return _PROFILES[recipe.name]


@dataclass(frozen=True, order=True)
class Fit:
    """Rank of a family for a skill: distinctive tools shared, then weak tools, then kinds."""
    tools: int
    weak: int
    kinds: int
    category: bool

    @property
    def fits(self) -> bool:
        return bool(self.tools or self.weak or self.kinds)

    @property
    def tier(self) -> int:
        """2: shares a distinctive tool; 1: a kind or an interpreter; 0: nothing."""
        return 2 if self.tools else 1 if (self.kinds or self.weak) else 0


def fit(recipe: Recipe, parts: SkillParts, category: str) -> Fit:
    prof = profile(recipe)
    shared = parts.evidence_tools & prof.tools
    return Fit(len(shared - WEAK_TOOLS), len(shared & WEAK_TOOLS), len(parts.kinds & prof.kinds),
               recipe.category == category)


def fitting_tiers(families: list[Recipe], parts: SkillParts, category: str) -> list[list[Recipe]]:
    """Families that share something with the skill, best first: a tier per (tier, category) rank,
    so a family of the skill's own category goes before another of the same tier."""
    ranked: dict[tuple[int, bool], list[Recipe]] = {}
    for r in families:
        f = fit(r, parts, category)
        if f.fits:
            ranked.setdefault((f.tier, f.category), []).append(r)
    return [sorted(ranked[k], key=lambda r: r.name) for k in sorted(ranked, reverse=True)]


# ---------------------------------------------------------------- what a built step used
FIDELITIES = ("tool", "artifact", "category-only")


@dataclass(frozen=True)
class StepFidelity:
    """One composed step: the skill it serves and what of that skill its solution really uses."""
    step: int
    skill_id: str
    skill_name: str
    recipe: str
    tools_used: tuple[str, ...] = ()
    kinds_used: tuple[str, ...] = ()
    fidelity: str = "category-only"     # one of FIDELITIES

    def as_dict(self) -> dict:
        return {"step": self.step, "skill_id": self.skill_id, "skill_name": self.skill_name, "recipe": self.recipe,
                "tools_used": list(self.tools_used), "kinds_used": list(self.kinds_used), "fidelity": self.fidelity}


def step_fidelity(step: int, skill_id: str, skill_name: str, recipe: Recipe, solve: str,
                  read: Artifact | None, left: Artifact, parts: SkillParts) -> StepFidelity:
    tools = sorted(parts.evidence_tools & solution_commands(solve))
    kinds = sorted(parts.kinds & (artifact_kinds(read) | artifact_kinds(left) | set(recipe.kinds)))
    level = "tool" if tools else "artifact" if kinds else "category-only"
    return StepFidelity(step, skill_id, skill_name, recipe.name, tuple(tools), tuple(kinds), level)

