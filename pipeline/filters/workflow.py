"""A skill must describe terminal work with a workflow.

workflow.steps: at least two concrete steps, or — a CLI reference — at least two concrete
commands that invoke a program with real arguments.
workflow.not_terminal: the core work is not done in a shell at all (marketing copy, coaching,
business planning, writing advice) — no commands beyond one in passing, no code, and words of
writing, business or people work far outnumber words of terminal work."""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from pipeline.filters.base import RuleResult
from pipeline.ingest.shell_commands import ShellCommand, shell_commands
from workbench.models import Outcome, ParsedSkill

MIN_STEPS = 2
MIN_COMMANDS = 2
# workflow.not_terminal fails only past both: conservative, a shell command or code block passes
MIN_HUMAN_WORDS = 5
HUMAN_SHARE = 0.6

_HUMAN_WORDS = (
    r"marketing|copywrit\w*|copy|headlines?|audiences?|brand(ing)?|voice|tone|personas?|buyers?|customers?|"
    r"sales|selling|sell|funnels?|conversions?|campaigns?|ads?|advertis\w+|leads?|offers?|pricing|launch(es)?|"
    r"growth|seo|blog(s|ging)?|newsletters?|storytelling|story|stories|books?|chapters?|authors?|readers?|"
    r"ebooks?|writers?|writing|drafts?|prose|essays?|coach(ing|es)?|mindset|empath\w*|feelings?|emotion\w*|"
    r"conversations?|interviews?|negotiat\w+|objections?|phishing|pretext\w*|vishing|physical|stakeholders?|"
    r"culture|values|community|communities|strateg(y|ies|ic)|brainstorm\w*|ideas?|ideation|creative|creativity|"
    r"insights?|principles?|methodolog(y|ies)|psycholog\w+|habits?|motivation|procrastinat\w+|relationships?|"
    r"persuasi\w+|messaging|positioning|pitch(es)?|revenue|business(es)?|entrepreneurs?|startups?|investors?|"
    r"markets?|thinking|think|mental|cognitive|reflect\w*|journal\w*|goals?|priorit\w+|meetings?|clients?|"
    r"people|humans?|managers?|leadership|hiring|candidates?|career|resume|profit\w*")
_HUMAN_WORK = re.compile(rf"\b({_HUMAN_WORDS})\b", re.I)
_TERMINAL_WORDS = (
    r"files?|director(y|ies)|folders?|scripts?|commands?|terminal|shell|cli|run(s|ning)?|execut\w+|"
    r"install\w*|build(s|ing)?|compil\w+|tests?|testing|repositor(y|ies)|repo|git|commits?|branch(es)?|code|"
    r"codebase|functions?|class(es)?|modules?|apis?|endpoints?|json|csv|yaml|toml|xml|sql|database|quer(y|ies)|"
    r"servers?|docker|containers?|logs?|errors?|debug\w*|config\w*|packages?|dependenc(y|ies)|python|node|"
    r"javascript|typescript|golang|rust|java|bash|npm|pip|regex|schemas?|pars\w+|paths?|bytes?|binar(y|ies)|"
    r"process(es)?|stdout|stderr",
    r"exit code",
    r"flags?|arguments?|variables?|compiler|runtime|library|libraries|"
    r"framework|sdk|http|url|requests?|responses?|kubernetes|cluster|deploy\w*|pdf|svg|png|html|css|markdown|"
    r"tables?|columns?|rows?|data(set)?|pandas|numpy|lint\w*|format\w*",
    r"\w+\.(py|sh|js|ts|json|md|csv|yaml|yml|toml|go|rs|sql|txt|html)")
_TERMINAL_WORK = re.compile(rf"\b({'|'.join(_TERMINAL_WORDS)})\b", re.I)
# The same finds word by word (a pattern that tries a hundred alternatives at every word of a
# long text was the rule's main cost): every alternative above but the phrase and the file name
# is made of word characters, so between its \b's it matches a whole word or nothing.
_WORDS = re.compile(r"(\w+)")   # split by it: separator, word, separator, word, ..., separator
_HUMAN_WORD = re.compile(f"(?:{_HUMAN_WORDS})", re.I)
_TERMINAL_WORD = re.compile(f"(?:{_TERMINAL_WORDS[0]}|{_TERMINAL_WORDS[2]})", re.I)
_FILE_SUFFIX = re.compile(_TERMINAL_WORDS[3].split("\\.", 1)[1], re.I)


@lru_cache(maxsize=1 << 16)
def _human_word(word: str) -> bool:
    return _HUMAN_WORD.fullmatch(word) is not None


@lru_cache(maxsize=1 << 16)
def _terminal_word(word: str) -> bool:
    return _TERMINAL_WORD.fullmatch(word) is not None


def work_words(text: str) -> tuple[list[str], int]:
    """(`[m.group(0).lower() for m in _HUMAN_WORK.finditer(text)]`, `len(_TERMINAL_WORK.findall(text))`).
    The terminal count takes each word an alternative is; 'exit code' counts one either way (its
    'code' is one); a file name `x.py` counts one, and its suffix is no word of its own."""
    parts = _WORDS.split(text)
    words, seps = parts[1::2], parts[2::2]   # seps[i] follows words[i]
    human = [w.lower() for w in words if _human_word(w)]
    terminal = sum(map(_terminal_word, words))
    taken = -1   # the suffix word of the last file name
    for i in [i for i, sep in enumerate(seps) if sep == "."]:
        if i != taken and i + 1 < len(words) and not _terminal_word(words[i]) and _FILE_SUFFIX.fullmatch(words[i + 1]):
            terminal += not _terminal_word(words[i + 1])
            taken = i + 1
    return human, terminal


# Fenced blocks that hold prose or a diagram, not a program.
_PROSE_LANGS = {"", "text", "txt", "plain", "plaintext", "markdown", "md", "mermaid", "dot"}
_FENCE = re.compile(r"^\s*(?:```+|~~~+)\s*([\w+-]*)")


def skill_commands(skill: ParsedSkill) -> tuple[ShellCommand, ...]:
    """The skill's commands; the programs it declares and the tool its name names are known."""
    name = skill.name.lower()
    own = {name, *(w for w in re.split(r"[^a-z0-9_.+-]+", name) if len(w) >= 3)}
    return _commands(skill.raw_text, frozenset(set(skill.bins) | own))


@lru_cache(maxsize=32)  # both workflow rules read the same skill's commands, one right after the other
def _commands(raw_text: str, known: frozenset[str]) -> tuple[ShellCommand, ...]:
    return tuple(shell_commands(raw_text, known=known))


def concrete_commands(commands: tuple[ShellCommand, ...]) -> list[ShellCommand]:
    """Distinct commands that do real work (set-up, --help and placeholders left out)."""
    seen: dict[str, ShellCommand] = {}
    for c in commands:
        if c.concrete and c.text not in seen:
            seen[c.text] = c
    return list(seen.values())


# `{skill_path}/scripts/x.py`, `<path-to-skill>/scripts/x.py`, `$SKILL_DIR/x.sh`: a file of the package
_IN_PACKAGE = re.compile(r"^(?:\{[\w-]*skill[\w-]*\}|<[^>]*skill[^>]*>|\$\{?\w*SKILL\w*\}?|~/\.claude/skills/[\w.-]+)/"
                         r"([\w./-]+\.(?:py|sh|js|mjs|cjs|ts|rb|pl|bash))$", re.I)


def missing_scripts(skill: ParsedSkill, commands: list[ShellCommand]) -> list[tuple[ShellCommand, str]]:
    """Commands that run a script of the skill's own folder which the package does not ship."""
    if skill.source_kind != "folder":
        return []  # a JSONL record carries no file list to check against
    files = set(skill.package_files)
    out = []
    for c in commands:
        for word in (c.program, *c.args):
            m = _IN_PACKAGE.match(word)
            if m and m.group(1).lstrip("./") not in files:
                out.append((c, m.group(1)))
                break
    return out


def _programs(commands: list[ShellCommand], limit: int = 5) -> str:
    names: list[str] = []
    for c in commands:
        if c.program not in names:
            names.append(c.program)
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def structured_steps(skill: ParsedSkill) -> RuleResult:
    n = len(skill.steps)
    commands = skill_commands(skill)
    concrete = concrete_commands(commands)
    missing = missing_scripts(skill, concrete)
    if concrete and len(missing) == len(concrete):
        c, path = missing[0]
        return RuleResult("workflow.steps", Outcome.FAIL,
                          f"every command runs a script of the skill that its package does not ship: "
                          f"{path} (line {c.line}: {c.text[:100]}); the package holds "
                          f"{', '.join(skill.package_files[:5])}", f"SKILL.md:{c.line}")
    if n >= MIN_STEPS:
        return RuleResult("workflow.steps", Outcome.PASS,
                          f"{n} steps, first: {skill.steps[0][:120]}; {len(concrete)} concrete command(s)")
    if len(concrete) >= MIN_COMMANDS:
        first = concrete[0]
        return RuleResult("workflow.steps", Outcome.PASS,
                          f"a CLI reference: {len(concrete)} concrete commands of {_programs(concrete)} "
                          f"(no step list) — first, line {first.line}: {first.text[:120]}",
                          f"SKILL.md:{first.line}")
    setup = [c for c in commands if c.setup]
    thin = thin_but_concrete(skill, setup)
    if thin:
        return RuleResult("workflow.steps", Outcome.PASS, f"thin but concrete: {thin}", "SKILL.md description")
    found = f"found {n} workflow step(s) and {len(concrete)} concrete command(s)"
    if concrete:
        found += f" (line {concrete[0].line}: {concrete[0].text[:80]})"
    if setup:
        found += f"; only install/set-up lines besides (line {setup[0].line}: {setup[0].text[:80]})"
    return RuleResult("workflow.steps", Outcome.FAIL,
                      f"{found}; needs a numbered list or step headings with at least {MIN_STEPS} "
                      f"steps, or at least {MIN_COMMANDS} commands that run a program with real arguments",
                      "SKILL.md body")


# "thin but concrete" (LABELLING.md): no step list, but the description says what a named tool
# does to local artifacts — a task can be built from that. Verb and object must both be there.
_ACTION = re.compile(
    r"\b(extract\w*|convert\w*|lint\w*|format\w*|reformat\w*|pars(e|es|ing)|generat\w+|render\w*|"
    r"analy[sz]\w+|profil\w+|scan\w*|compar\w+|diff\w*|transcrib\w+|compress\w*|validat\w+|"
    r"transform\w*|merg\w+|split\w*|resiz\w+|synthesi[sz]\w+|benchmark\w*|migrat\w+|quer(y|ies)|"
    r"encod\w+|decod\w+|optimi[sz]\w+|rewrit\w+|build\w*|compil\w+|minif\w+|check\w*|detect\w*|"
    r"audit\w*|test\w*|measur\w+|sort\w*|filter\w*|deduplicat\w+|index\w*|search\w*)\b", re.I)
_ARTIFACT = re.compile(
    r"\b(files?|pdfs?|images?|videos?|audio|frames?|clips?|yaml|json|csv|parquet|xml|toml|code|source|"
    r"templates?|tables?|schemas?|config\w*|dataframes?|sql|markdown|html|logs?|repo(sitor(y|ies))?|"
    r"projects?|layers?|dashboards?|gifs?|speech|text|documents?|manifests?|catalogs?|citations?|"
    r"bibliograph\w+|workflows?|pipelines?|scripts?|tarballs?|archives?|datasets?|models?|queries|"
    r"benchmarks?|tests?|binar(y|ies)|packages?|dependenc(y|ies)|locales?|strings?|fonts?|svgs?)\b", re.I)
MIN_DESCRIPTION_WORDS = 8
# A thin text that names a remote API or hosted product does not say whether its core is offline.
# So does one whose core step is a language model (the labels: "LLM-assisted generation",
# "natural-language actions") or a public cloud's service (AWS Glue, Azure, GCP).
_REMOTE_IN_DESCRIPTION = re.compile(r"\b((rest|http|graphql|web) apis?|apis? v\d|v\d+ apis?|api keys?|cloud|hosted|"
                                    r"saas|accounts?|logged[- ]in|live|remote|claude code|mcp|llms?|gpt[- ]?\d\w*|"
                                    r"natural[- ]language|ai[- ](powered|assisted|driven|generated)|generative ai|"
                                    r"language models?|aws|azure|gcp|google cloud)\b", re.I)


# A thin text that calls itself advice names no work to do ("Guidance for tidying up history").
_ADVICE_IN_DESCRIPTION = re.compile(r"\b(guidance|guidelines?|tips|advice|best practices|principles|"
                                    r"methodolog(y|ies)|philosophy|mindset)\b", re.I)
# ... and one without commands or code that calls itself so is not shell work at all
_SAYS_ADVICE = re.compile(_ADVICE_IN_DESCRIPTION.pattern[:-3] + r"|persona|style guide|response style|"
                          r"how (agents?|you|teams?) should)\b", re.I)
_OPTIONAL_BEFORE = re.compile(r"\b(optional(ly)?|if you have|can also)\b[^.;,]{0,25}$", re.I)


def _remote_core(desc: str) -> re.Match | None:
    """The first remote or model word the thin text does not call optional ("optional LLM-boosted
    extraction" is a help beside an offline core)."""
    return next((m for m in _REMOTE_IN_DESCRIPTION.finditer(desc)
                 if not _OPTIONAL_BEFORE.search(desc[:m.start()])), None)


def thin_but_concrete(skill: ParsedSkill, setup: list[ShellCommand]) -> str | None:
    """Why a skill without steps still names concrete work, or None: a description of at least
    MIN_DESCRIPTION_WORDS words with an action and an object of terminal work, and a tool that
    can be installed (an install line, declared binaries, or an upstream project it names)."""
    desc = " ".join(skill.description.split())
    if len(desc.split()) < MIN_DESCRIPTION_WORDS:
        return None
    eco = (skill.front_matter or {}).get("tool_ecosystem")
    verb, obj = _ACTION.search(desc), _ARTIFACT.search(desc)
    if not (verb and obj) or _remote_core(desc) or _ADVICE_IN_DESCRIPTION.search(desc):
        return None
    tool = (f"install line {setup[0].line}: {setup[0].text[:60]}" if setup
            else f"binaries {', '.join(skill.bins[:3])}" if skill.bins
            else f"upstream {eco.get('github_repo')}" if isinstance(eco, dict) and eco.get("github_repo")
            else None)
    if tool is None:
        return None
    return f"the description says what a tool does ('{verb.group(0)}' … '{obj.group(0)}': {desc[:100]}); {tool}"


def _code_blocks(text: str) -> list[tuple[int, str]]:
    """(line, language) of each fenced block that holds code, not prose."""
    out, open_fence = [], False
    for n, line in enumerate(text.splitlines(), start=1):
        m = _FENCE.match(line)
        if m:
            if not open_fence and m.group(1).lower() not in _PROSE_LANGS:
                out.append((n, m.group(1).lower()))
            open_fence = not open_fence
    return out


def not_terminal(skill: ParsedSkill) -> RuleResult:
    text = skill.raw_text
    concrete = concrete_commands(skill_commands(skill))
    code = _code_blocks(text)
    human, terminal = work_words(text)
    share = len(human) / (len(human) + terminal) if human else 0.0
    counts = (f"{len(concrete)} concrete command(s), {len(code)} code block(s), {terminal} words of "
              f"terminal work against {len(human)} of writing, business or people work")
    if len(concrete) >= MIN_COMMANDS or code or len(human) < MIN_HUMAN_WORDS or share < HUMAN_SHARE:
        thin = None if concrete or code else thin_but_concrete(skill, [c for c in skill_commands(skill) if c.setup])
        if thin:
            return RuleResult("workflow.not_terminal", Outcome.PASS, f"terminal work, thin but concrete: {thin}")
        if not concrete and not code:
            said = _SAYS_ADVICE.search(" ".join(f"{skill.name} {skill.description}".split()))
            if said:   # no command, no code, and it calls itself advice: nothing in it runs in a shell
                return RuleResult("workflow.not_terminal", Outcome.FAIL,
                                  f"no command and no code anywhere, and it calls itself '{said.group(0)}': "
                                  f"{counts}", "SKILL.md description")
            # steps that never name a command or show code may be methodology: a person decides
            return RuleResult("workflow.not_terminal", Outcome.WARN,
                              f"no command and no code anywhere, so maybe not shell work: {counts}",
                              "SKILL.md body")
        return RuleResult("workflow.not_terminal", Outcome.PASS, f"terminal work: {counts}")
    top = ", ".join(f"{w} ×{n}" for w, n in Counter(human).most_common(4))
    lines = sorted(((len(_HUMAN_WORK.findall(ln)), n, ln.strip()[:160])
                    for n, ln in enumerate(text.splitlines(), start=1)), key=lambda t: (-t[0], t[1]))[:2]
    shown = "; ".join(f"line {n}: {ln}" for _, n, ln in sorted(lines, key=lambda t: t[1]))
    return RuleResult("workflow.not_terminal", Outcome.FAIL,
                      f"the core work is not done in a shell: {len(human)} words of writing, business or "
                      f"people work ({top}) against {terminal} of terminal work, {len(concrete)} concrete "
                      f"command(s) and no code — {shown}", f"SKILL.md:{min(lines, key=lambda t: t[1])[1]}")


RULES = (structured_steps, not_terminal)
