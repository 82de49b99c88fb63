"""How well a recipe family fits a path step's skill, and what a built step really uses of it.

A skill is known by what its SKILL.md runs (tools) and the kinds of state it reads and writes
(`pipeline.artifacts`). A family is known by the commands its solution runs and the kinds of
the artifacts it reads and leaves (derived from a few dry builds on its own seed) plus the
state kinds it declares (`Recipe.kinds`). The composer picks among the families that share a
distinctive tool or a kind with the skill, and checks the draw it would make really uses one;
a skill with evidence and no such family gets no substitute (NoRecipeError).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from pipeline.shell_syntax import script_commands

from .recipes import REGISTRY
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
        """A distinctive tool or a state kind: an interpreter alone (python3) could be any work."""
        return bool(self.evidence_tools - WEAK_TOOLS or self.kinds)

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

    def __init__(self, skill_name: str, parts: SkillParts, unknown_category: str | None = None):
        self.skill_name, self.parts = skill_name, parts
        needs = parts.needs() if parts.has_evidence else \
            f"nothing a recipe knows (no distinctive tools or state kinds, and category {unknown_category!r})"
        super().__init__(f"no offline recipe for {skill_name}: needs {needs}")


class RepeatedFamilyError(SynthesisError):
    """A step's skill fits only families the task may not use again: a task never has one family
    in consecutive steps nor more than twice (the same recipe twice reads as one task padded)."""

    def __init__(self, skill_name: str, step: int, families: list[str], used: list[str], reading: str = ""):
        """`reading`: what the previous step left, when the skill fits other families too but only
        these read it (the others not even through adapters)."""
        self.skill_name, self.step, self.families = skill_name, step, list(families)
        at = sorted({i for i, f in enumerate(used, 1) if f in self.families})
        which = f"step {at[0]}" if len(at) == 1 else "steps " + ", ".join(map(str, at[:-1])) + f" and {at[-1]}"
        how = f" to read the {reading}" if reading else ""
        super().__init__(f"{skill_name} fits only {' or '.join(self.families)}{how}, which {which} already "
                         f"{'uses' if len(at) == 1 else 'use'} (step {step}: no family in consecutive steps "
                         f"or more than twice in a task)")


# ---------------------------------------------------------------- what a solution runs
_PREFIXES = frozenset({"sudo", "env", "time", "exec", "nohup", "command", "xargs", "then", "do", "else", "!"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_COMMAND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*")


def solution_commands(solve: str) -> set[str]:
    """The commands a bash solution runs (canonical names): the first word of every simple
    command, heredoc bodies and quoted strings left out (a jq program's `map` is no command)."""
    cmds = script_commands(solve)
    # `norm() {`, `function norm {`: the script's own, not a tool
    functions = {c[0] for c in cmds if c[1:3] == ["(", ")"]}
    functions |= {c[1] for c in cmds if len(c) > 1 and c[0] == "function"}
    out: set[str] = set()
    for words in cmds:
        while words and (words[0] in _PREFIXES or _ASSIGNMENT.match(words[0]) or words[0].startswith("-")
                         or words[0] == "{}"):   # `xargs -I {} lsof -p {}`: the replacement string
            words = words[1:]
        if words and _COMMAND_NAME.fullmatch(words[0]) and words[0] not in SHELL_WORDS \
                and words[0] not in functions:
            out.add(canonical_tool(words[0]))
            if words[0] == "tar":
                out |= _tar_compressors(words[1:])
    return out


_TAR_FILTERS = {"z": "gzip", "J": "xz", "j": "bzip2"}
_TAR_LONG = {"--gzip": "gzip", "--xz": "xz", "--bzip2": "bzip2", "--zstd": "zstd"}


def _tar_compressors(args: list[str]) -> set[str]:
    """The compressor tar runs for `-czf`, `cJf`, `--xz`, `--zstd` (it execs the program itself)."""
    out = {_TAR_LONG[a] for a in args if a in _TAR_LONG}
    flags = [a for i, a in enumerate(args) if re.fullmatch(r"-[A-Za-z]+", a) or (i == 0 and re.fullmatch(r"[A-Za-z]+", a))]
    return out | {_TAR_FILTERS[c] for a in flags for c in a.lstrip("-") if c in _TAR_FILTERS}


# ---------------------------------------------------------------- what an artifact is, as state kinds
RECORD_KINDS = {"csv": "csv-table", "tsv": "tsv-table", "json": "json-document", "jsonl": "jsonl-records"}
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


PROFILE_DRAWS = 4   # a family's solution varies by draw (tar.gz or tar.xz): its profile is the union of a few


def _seed_profile(recipe: Recipe) -> FamilyProfile:
    """Tools and kinds of dry builds on the family's own seed, plus what it declares."""
    tools, kinds = set(recipe.tools), set(recipe.kinds)
    for draw in range(PROFILE_DRAWS):
        try:
            ctx = StepContext(random.Random(f"profile|{recipe.name}|{draw}"))
            ctx.index = 1
            art = recipe.seed(ctx)
            frag = recipe.build(ctx, art)
        except (SynthesisError, TypeError, AttributeError):
            continue   # a sink family with no seed of its own: its declaration is all there is
        tools |= solution_commands(frag.solve)
        kinds |= artifact_kinds(art) | artifact_kinds(frag.output)
    return FamilyProfile(frozenset(t for t in tools if t not in PLUMBING), frozenset(kinds))


def profile(recipe: Recipe) -> FamilyProfile:
    """Cached per family name (a family's seed and build never change within a process)."""
    if recipe.name not in _PROFILES:
        _PROFILES[recipe.name] = _seed_profile(recipe)
    return _PROFILES[recipe.name]


# A tool or kind that few families share says more about a family than one most share (sort,
# a CSV table): each counts SPECIFIC / (families sharing it), at most 1.
SPECIFIC = 3.0
CATEGORY_BONUS = 0.5
TOP_SHARE = 0.6       # families scoring this share of the best one are all candidates (variety)


def _rarity() -> tuple[dict[str, float], dict[str, float]]:
    """Weight per tool and per kind over the registered families (computed once)."""
    if not _RARITY:
        tools: dict[str, int] = {}
        kinds: dict[str, int] = {}
        for r in REGISTRY.values():
            prof = profile(r)
            for t in prof.tools:
                tools[t] = tools.get(t, 0) + 1
            for k in prof.kinds:
                kinds[k] = kinds.get(k, 0) + 1
        _RARITY.append({t: min(1.0, SPECIFIC / n) * (0.5 if t in WEAK_TOOLS else 1.0) for t, n in tools.items()})
        _RARITY.append({k: min(1.0, SPECIFIC / n) for k, n in kinds.items()})
    return _RARITY[0], _RARITY[1]


_RARITY: list[dict[str, float]] = []


@dataclass(frozen=True)
class Fit:
    """What a family shares with a skill, and the resulting score."""
    tools: frozenset[str]
    kinds: frozenset[str]
    category: bool
    score: float

    @property
    def fits(self) -> bool:
        """Shares a distinctive tool or a state kind (a shared interpreter only adds to the score)."""
        return bool(self.tools - WEAK_TOOLS or self.kinds)


def fit(recipe: Recipe, parts: SkillParts, category: str) -> Fit:
    prof = profile(recipe)
    tool_w, kind_w = _rarity()
    tools, kinds = parts.evidence_tools & prof.tools, parts.kinds & prof.kinds
    same = recipe.category == category
    score = sum(tool_w.get(t, 1.0) for t in tools) + sum(kind_w.get(k, 1.0) for k in kinds)
    return Fit(frozenset(tools), frozenset(kinds), same, score + (CATEGORY_BONUS if same and score else 0.0))


def fitting_tiers(families: list[Recipe], parts: SkillParts, category: str) -> list[list[Recipe]]:
    """Families that share a tool or a state kind with the skill, in two tiers: those scoring near
    the best (the composer's candidates), then the others (used when none of the first can read
    what the previous step left). Empty when none shares anything."""
    fits = [(f.score, r) for r, f in ((r, fit(r, parts, category)) for r in families) if f.fits]
    if not fits:
        return []
    best = max(sc for sc, _ in fits)
    top = sorted((r for sc, r in fits if sc >= TOP_SHARE * best), key=lambda r: r.name)
    rest = sorted((r for sc, r in fits if sc < TOP_SHARE * best), key=lambda r: (-fit(r, parts, category).score, r.name))
    return [top] + ([rest] if rest else [])


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
    score: int = 0                      # the rubric (pipeline.synth.fidelity_rubric): 2 claims the skill
    evidence: dict = field(default_factory=dict)   # RubricScore.evidence(): via, uses, both quotes, note
    gap: str = ""                       # why no step of the task runs this skill's own workflow ('' if one does)

    @property
    def claims(self) -> bool:
        """A step claims its skill only at 2; below it the step is connective (no skill claim)."""
        from .fidelity_rubric import CLAIMED_AT   # the rubric module reads this one's tool lists
        return self.score >= CLAIMED_AT

    def as_dict(self) -> dict:
        return {"step": self.step, "skill_id": self.skill_id, "skill_name": self.skill_name, "recipe": self.recipe,
                "tools_used": list(self.tools_used), "kinds_used": list(self.kinds_used), "fidelity": self.fidelity,
                "score": self.score, "evidence": dict(self.evidence) or None, "gap": self.gap or None}


def rubric_fidelity(step: int, skill_id: str, skill_name: str, recipe: str, solve: str, parts: SkillParts,
                    tools: list[str], kinds: list[str], description: str = "") -> StepFidelity:
    """One step's record: what it shares with its skill (level) and the rubric score with evidence."""
    from .fidelity_rubric import score_step, teaching   # the rubric module reads this one's tool lists
    level = "tool" if set(tools) - WEAK_TOOLS else "artifact" if kinds else "category-only"
    teach = teaching(parts.body, skill_name, description, tuple(parts.tools))
    rs = score_step(solve, teach, shared_tools=tools, shared_kinds=kinds)
    return StepFidelity(step, skill_id, skill_name, recipe, tuple(tools), tuple(kinds), level, rs.score,
                        rs.evidence())


def step_fidelity(step: int, skill_id: str, skill_name: str, recipe: Recipe, solve: str,
                  read: Artifact | None, left: Artifact, parts: SkillParts, description: str = "") -> StepFidelity:
    tools = sorted(parts.evidence_tools & solution_commands(solve))
    kinds = sorted(parts.kinds & (artifact_kinds(read) | artifact_kinds(left) | set(recipe.kinds)))
    return rubric_fidelity(step, skill_id, skill_name, recipe.name, solve, parts, tools, kinds, description)

