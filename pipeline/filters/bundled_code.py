"""The package's own code, read for the needs SKILL.md rules look for (LABELLING.md: "a need that
only shows in the code still counts" — SKILL.md says "no API key", src/index.ts calls a paid LLM).

Bundled Python, JS/TS and shell files are read (bounded: at most MAX_FILES files, MAX_FILE_BYTES
of each, MAX_LINE_CHARS of a line; links and files outside the package are not followed) and
searched for: the client or host of an API billed by use (needs.code_paid_service); a credential
read from the environment or a logged-in browser profile (needs.code_account); a call to a remote
host, a LAN address or a hardware address (needs.code_network); a web shell among the bundled
server pages (safety.code_backdoor). Evidence is file:line.

A test file, an example or a fallback branch can hold such a line without the core needing it,
so a rule fails only where the need shows in MIN_CORE_LINES lines, or in a file SKILL.md runs."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath

from pipeline.filters.base import RuleResult, passed
from pipeline.filters.credentials import METERED_VENDOR, credential_vars
from pipeline.filters.required_literals import LineIndex
from workbench.models import Outcome, ParsedSkill

CODE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".sh", ".bash")
MAX_FILES = 40              # a package of hundreds of scripts is read in part, not at all
MAX_FILE_BYTES = 256 * 1024
MAX_LINE_CHARS = 2_000      # a minified line is cut, so one regex never walks megabytes
MIN_CORE_LINES = 2
# code that is not the skill's work: tests, fixtures, vendored libraries, examples
_NOT_CORE = re.compile(r"(^|/)(tests?|__tests__|spec|fixtures?|examples?|node_modules|vendor|dist|build)/|"
                       r"(^|/)(test_[^/]*|[^/]*[._](test|spec)\.\w+|conftest\.py)$", re.I)

_LLM_CLIENT = re.compile(
    r"^\s*(import|from)\s+(openai|anthropic|google\.generativeai|google\.genai|cohere|mistralai|groq|replicate|"
    r"elevenlabs|together|fireworks)\b|"
    r"require\(\s*['\"](openai|@anthropic-ai/sdk|@google/generative-ai|@google/genai|groq-sdk|replicate|"
    r"elevenlabs|@mistralai/mistralai)['\"]|"
    r"\bfrom\s+['\"](openai|@anthropic-ai/sdk|@google/generative-ai|@google/genai|groq-sdk|@ai-sdk/\w+|"
    r"elevenlabs|@mistralai/mistralai)['\"]|"
    r"\b(api\.openai\.com|api\.anthropic\.com|generativelanguage\.googleapis\.com|openrouter\.ai/api|"
    r"api\.elevenlabs\.io|api\.replicate\.com|api\.groq\.com|api\.mistral\.ai|api\.perplexity\.ai|"
    r"api\.tavily\.com|api\.firecrawl\.dev|api\.deepseek\.com)\b")
# a credential read from the environment: os.environ["X_TOKEN"], os.getenv("X_API_KEY"), process.env.X_KEY, $X_TOKEN
_ENV_READ = re.compile(r"(?:\bos\.environ(?:\.get)?\s*[\[(]\s*['\"]|\bos\.getenv\(\s*['\"]|\bprocess\.env\.|"
                       r"\bprocess\.env\[\s*['\"]|\bDeno\.env\.get\(\s*['\"])(?P<name>[A-Z][A-Z0-9_]*)|"
                       r"\$\{?(?P<shell>[A-Z][A-Z0-9_]*(?:TOKEN|API_KEY|SECRET))\b")
_BROWSER_PROFILE = re.compile(r"(google-chrome|chromium|Google/Chrome|Chrome/User Data|BraveSoftware|"
                              r"\.mozilla/firefox|Firefox/Profiles)[/\\][^'\"\s]*|\bbrowser_cookie3\b|"
                              r"\buser_data_dir\b|\buserDataDir\b|\bCookies['\"]?\s*\)|\bpycookiecheat\b", re.I)
_REMOTE_CALL = re.compile(
    r"\b(requests|httpx|session|client|aiohttp\.ClientSession\(\))\.(get|post|put|patch|delete|request)\(\s*"
    r"f?['\"]https?://(?!localhost|127\.|0\.0\.0\.0|\[::1\])|"
    r"\b(fetch|axios(\.(get|post|put|delete))?|urlopen|got)\(\s*[`'\"]https?://(?!localhost|127\.|0\.0\.0\.0)|"
    r"\b(curl|wget)\s+(-\S+\s+)*['\"]?https?://(?!localhost|127\.|0\.0\.0\.0)|"
    r"\b(Web3\.HTTPProvider|JsonRpcProvider|Connection)\(\s*['\"]https?://")
_LAN_OR_DEVICE = re.compile(r"\b(192\.168|10\.\d{1,3}|172\.(1[6-9]|2\d|3[01]))\.\d{1,3}\.\d{1,3}\b|"
                            r"\b[0-9A-F]{2}(:[0-9A-F]{2}){5}\b|/dev/tty(USB|ACM)\d|\bbluetooth(ctl)?\b|"
                            r"\b(pyserial|serial\.Serial|bleak|paho\.mqtt|hid\.device)\b", re.I)


@dataclass(frozen=True)
class CodeLine:
    path: str     # relative to the package
    number: int
    text: str


def code_files(skill: ParsedSkill) -> list[str]:
    """The package's code files, core ones first, at most MAX_FILES."""
    if skill.source_kind != "folder":
        return []
    files = [f for f in skill.package_files if f.lower().endswith(CODE_SUFFIXES)
             and ".." not in PurePosixPath(f).parts]
    return sorted(files, key=lambda f: (bool(_NOT_CORE.search(f)), f))[:MAX_FILES]


def read_code(root: Path, rel: str) -> list[CodeLine]:
    """The lines of one package file, bounded; [] for a link, a missing file or one outside root."""
    p = root / rel
    try:
        if p.is_symlink() or not p.is_file() or not p.resolve().is_relative_to(root.resolve()):
            return []
        with p.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES)
    except OSError:
        return []
    if b"\0" in data[:4096]:
        return []   # binary
    text = data.decode("utf-8", errors="replace")
    return [CodeLine(rel, n, ln[:MAX_LINE_CHARS]) for n, ln in enumerate(text.splitlines(), start=1)]


@lru_cache(maxsize=8)   # the three rules read the same package one after the other
def _package_code(source_path: str, files: tuple[str, ...],
                  content_hash: str) -> tuple[tuple[list[CodeLine], LineIndex], ...]:
    """Each code file's lines, with an index of them to find the lines a pattern could match.
    `content_hash` (of the whole package) is in the key so an edited package is read again."""
    root = Path(source_path)
    return tuple((lines, LineIndex([ln.text for ln in lines])) for f in files if (lines := read_code(root, f)))


def _code(skill: ParsedSkill) -> tuple[tuple[list[CodeLine], LineIndex], ...]:
    files = code_files(skill)
    return _package_code(skill.source_path, tuple(files), skill.content_hash) if files else ()


def _is_comment(text: str) -> bool:
    s = text.lstrip()
    return s.startswith(("#", "//", "*", "/*")) and not s.startswith("#!")


def _verdict(rule: str, skill: ParsedSkill, hits: list[CodeLine], what: str, clean: str) -> RuleResult:
    core = [h for h in hits if not _NOT_CORE.search(h.path)]
    run_by_skill = [h for h in core if PurePosixPath(h.path).name in skill.raw_text]
    evidence = "; ".join(f"{h.path}:{h.number}: {h.text.strip()[:160]}" for h in (run_by_skill or core or hits)[:3])
    if len(core) >= MIN_CORE_LINES or run_by_skill:
        first = (run_by_skill or core)[0]
        return RuleResult(rule, Outcome.FAIL, f"the bundled code {what} — {evidence}", f"{first.path}:{first.number}")
    if hits:
        return RuleResult(rule, Outcome.WARN, f"the bundled code, in passing (a test, an example or one line), {what} — "
                          f"{evidence}", f"{hits[0].path}:{hits[0].number}")
    return passed(rule, clean)


def _env_names(text: str) -> list[str]:
    """Env var names the line reads."""
    return [m.group("name") or m.group("shell") for m in _ENV_READ.finditer(text)]


def _find(skill: ParsedSkill, match, *could_match: re.Pattern[str]) -> list[CodeLine]:
    """The code lines, not comments, that `match` finds something in; only the lines one of
    `could_match` could match are looked at (`match` finds nothing elsewhere)."""
    found = []
    for lines, index in _code(skill):
        for i in index.indices(could_match):
            if not _is_comment(lines[i].text) and match(lines[i].text):
                found.append(lines[i])
    return found


def code_paid_service(skill: ParsedSkill) -> RuleResult:
    def metered_key(text: str) -> bool:
        return any(METERED_VENDOR.match(n) for n in _env_names(text))
    hits = _find(skill, lambda t: _LLM_CLIENT.search(t) or metered_key(t), _LLM_CLIENT, _ENV_READ)
    return _verdict("needs.code_paid_service", skill, hits, "calls an API billed by use",
                    "the bundled code calls no API billed by use")


def code_account(skill: ParsedSkill) -> RuleResult:
    def credential(text: str) -> bool:
        return any(credential_vars(n) and not METERED_VENDOR.match(n) for n in _env_names(text))
    hits = _find(skill, lambda t: credential(t) or _BROWSER_PROFILE.search(t), _ENV_READ, _BROWSER_PROFILE)
    return _verdict("needs.code_account", skill, hits, "reads a credential of an outside service or a logged-in "
                    "browser profile", "the bundled code reads no outside credential")


def code_network(skill: ParsedSkill) -> RuleResult:
    hits = _find(skill, lambda t: _REMOTE_CALL.search(t) or _LAN_OR_DEVICE.search(t), _REMOTE_CALL, _LAN_OR_DEVICE)
    return _verdict("needs.code_network", skill, hits, "talks to a remote host, a LAN address or a device",
                    "the bundled code talks to no remote host or device")


# A web shell: a server page that hands request input to a command runner. Both halves in one file.
WEB_PAGE_SUFFIXES = (".php", ".jsp", ".jspx", ".asp", ".aspx", ".cfm")
_REQUEST_INPUT = re.compile(r"\$_(GET|POST|REQUEST|COOKIE|FILES)\b|\brequest\.getParameter\(|\bRequest(\.Form|\.QueryString)?\s*[(\[]|"
                            r"\b(url|form)\.\w+\b", re.I)
_COMMAND_RUN = re.compile(r"\b(system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|eval|assert)\s*\(|`\$_|"
                          r"\bRuntime\.getRuntime\(\)\.exec\(|\bProcessBuilder\(|WScript\.Shell|\bcmd(\.exe)?\s*/c\b|"
                          r"<cfexecute\b", re.I)


def code_backdoor(skill: ParsedSkill) -> RuleResult:
    """Bundled web shells (LABELLING.md: unsafe — "bundles functional web shells/backdoors")."""
    if skill.source_kind != "folder":
        return passed("safety.code_backdoor", "no package files to read")
    pages = [f for f in skill.package_files if f.lower().endswith(WEB_PAGE_SUFFIXES)
             and ".." not in PurePosixPath(f).parts][:MAX_FILES]
    found = []
    for rel in pages:
        lines = read_code(Path(skill.source_path), rel)
        run = next((ln for ln in lines if _COMMAND_RUN.search(ln.text)), None)
        if run and any(_REQUEST_INPUT.search(ln.text) for ln in lines):
            found.append(run)
    if not found:
        return passed("safety.code_backdoor", f"no web shell among {len(pages)} bundled server page(s)")
    shown = "; ".join(f"{h.path}:{h.number}: {h.text.strip()[:120]}" for h in found[:3])
    return RuleResult("safety.code_backdoor", Outcome.FAIL,
                      f"bundles {len(found)} web shell(s): server pages that run commands from request input — {shown}",
                      f"{found[0].path}:{found[0].number}")


RULES = (code_paid_service, code_account, code_network, code_backdoor)
