"""The typed artifacts of a skill and the collector that gathers their evidence.

A reference is one (role, kind, name) with its first evidence and line; the collector adds
up the weight of every mention so the strongest kinds come first."""
from __future__ import annotations

from dataclasses import dataclass

from pipeline.artifacts import vocabulary as voc

CODE, INPUT_SECTION, FILE, WORD = 3.0, 3.0, 2.0, 1.0   # evidence weights


@dataclass(frozen=True)
class ArtifactRef:
    kind: str                 # a vocabulary kind name
    name: str | None          # the file name, or the qualifier (a language), or None
    evidence: str             # the text it was read from (trimmed)
    line: int | None          # 1-based line in the SKILL.md, None for parsed inputs/outputs


@dataclass(frozen=True)
class SkillArtifacts:
    tools: tuple[str, ...]               # binaries really invoked, in order of first use
    consumes: tuple[ArtifactRef, ...]    # strongest evidence first
    produces: tuple[ArtifactRef, ...]

    @property
    def consumed_kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.kind for r in self.consumes))

    @property
    def produced_kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.kind for r in self.produces))

    @property
    def empty(self) -> bool:
        return not (self.consumes or self.produces)

# The skill package's own files and other skills' or agents' files: tooling, not machine state.
_PACKAGE_DIRS = ("scripts/", "references/", "reference/", "assets/", "templates/", "examples/", "agents/", "../",
                 "shared/", "rules/", ".claude/", ".agents/", ".cursor/", ".codex/", ".gemini/", "skills/")
_NOT_FILES = frozenset({"e.g", "i.e", "etc", "vs", "node.js", "next.js", "vue.js", "nuxt.js", "react.js", "d3.js",
                        "three.js", "socket.io", "chart.js", "express.js", "asp.net", "skill.md", "claude.md",
                        "agents.md", "readme.md"})


class Collector:
    def __init__(self, bins: frozenset[str]):
        self.bins = bins
        self.tools: dict[str, None] = {}
        self.refs: dict[tuple[str, str, str | None], list] = {}   # (role, kind, name) -> [weight, (line, seq), ref]
        self.order = 0

    def add(self, role: str, kind: str, name: str | None, weight: float, evidence: str, line: int | None) -> None:
        key = (role, kind, name)
        slot = self.refs.get(key)
        if slot is None:
            self.order += 1   # by line first: prose is read after the code, but its lines count in place
            self.refs[key] = [weight, (line if line is not None else -1, self.order),
                              ArtifactRef(kind, name, evidence.strip()[:160], line)]
        else:
            slot[0] += weight

    def file(self, role: str, token: str, weight: float, evidence: str, line: int | None) -> tuple | None:
        """Record a file argument or mention by the kind its name signals; the key it went under."""
        token = token.strip("'\"`,;:()[]{}<>").removeprefix("./").lstrip("-")
        low = token.lower()
        if not token or low.rsplit("/", 1)[-1] in _NOT_FILES or low.startswith(_PACKAGE_DIRS) or \
                ("*" in token and "." not in token):
            return None
        kind = voc.kind_of_file(token)
        if kind is None:
            return None
        name = token if kind not in voc.QUALIFIED else voc.language_of_file(token)
        self.add(role, kind, name, weight, evidence, line)
        return (role, kind, name)

    def result(self) -> SkillArtifacts:
        def side(role: str) -> tuple[ArtifactRef, ...]:
            named = {k for (r, k, name) in self.refs if r == role and name is not None}
            made_first = {(k, name): slot[1] for (r, k, name), slot in self.refs.items()
                          if r == "produces" and name is not None}
            # a nameless ref (from a command or a word) adds its weight to the named ones of its kind
            rows = [(w, o, ref) for (r, _, _), (w, o, ref) in self.refs.items()
                    if r == role and (ref.name is not None or ref.kind not in named)
                    # a file the skill itself wrote before it reads it is an intermediate, not an input
                    and not (r == "consumes" and made_first.get((ref.kind, ref.name), (1 << 62, 0)) < o)]
            # per kind: total weight decides the kind's rank, then each ref by its own weight
            by_kind: dict[str, float] = {}
            for (r, _, _), (w, _, ref) in self.refs.items():
                if r != role:
                    continue
                by_kind[ref.kind] = by_kind.get(ref.kind, 0.0) + w
            first: dict[str, int] = {}
            for _, o, ref in rows:
                first[ref.kind] = min(first.get(ref.kind, o), o)
            rows.sort(key=lambda x: (-by_kind[x[2].kind], first[x[2].kind], -x[0], x[1]))
            return tuple(ref for _, _, ref in rows)
        return SkillArtifacts(tuple(self.tools), side("consumes"), side("produces"))
