"""Can the skill run in a terminal: no GUI, no paid or private service, a Linux OS,
binaries that can be installed."""
from __future__ import annotations

import re

from pipeline.binaries import KNOWN_BINS
from pipeline.filters import external
from pipeline.ingest.skill_markdown import openclaw_meta
from pipeline.filters.base import RuleResult, compile_all, find_lines, from_hits, passed
from pipeline.filters.gui import gui  # its own module: the GUI words need context checks
from pipeline.filters.required_literals import line_index, may_match
from workbench.models import Outcome, ParsedSkill

_PAID = compile_all(
    r"\b(paid|premium|pro|business|enterprise)\s+(plan|tier|subscription|account|license|edition)\b",
    r"\b(subscription|licen[cs]e key|seat)\b.{0,40}\b(required|needed|must)\b",
    r"\brequires?\b.{0,40}\b(subscription|enterprise|paid|billing)\b",
    r"\b(corporate|company|office)\s+(vpn|network|intranet|sso)\b",
    r"\binternal\s+(vpn|intranet|sso)\b",
    r"\b(only|just)\s+(reachable|accessible|available)\s+(from|inside|on)\s+(the\s+)?"
    r"(corporate|company|office|internal|vpn)",
    r"https?://[\w.-]+\.(internal|corp|intranet|lan)\b",
    # a login to a host on a private network that a sandbox will never reach
    r"\b(ssh|scp|sftp|rsync|telnet|mosh)\b[^\n]*?\b(10\.\d{1,3}|192\.168|172\.(1[6-9]|2\d|3[01]))\.\d{1,3}\.\d{1,3}\b",
    # SaaS vendors' accounts and keys are needs.saas / needs.api_key (pipeline/filters/external.py)
)
_BILLING_ENV = re.compile(r"PAYMENT|BILLING|LICENSE_KEY", re.I)

_NON_LINUX = compile_all(
    r"\bbrew\s+(install|services)\b", r"\blaunchctl\b", r"\bpowershell\b", r"\b\w+\.exe\b",
    r"\b[A-Z]:\\\\?\w", r"\bwinget\b", r"\bchoco\s+install\b", r"\bosascript\b",
    r"\bdefaults\s+write\b", r"\breg(\.exe)?\s+add\b",
) + [re.compile(r"\b(Get|Set|New|Remove|Start|Stop|Restart|Invoke)-[A-Z][a-z]\w*")]  # PowerShell cmdlets
_ONLY_ELSEWHERE = compile_all(
    r"\b(macos|mac os x|os x|osx|windows)[- ]only\b",
    r"\b(only|just)\s+(works|runs|available)\s+on\s+(macos|mac|windows)\b",
    r"\brequires\s+(macos|a mac|windows)\b",
)
# Apple's SDKs (Xcode, UIKit/SwiftUI, the iOS simulator, CocoaPods) exist only on macOS: work
# that builds or runs an iOS or macOS app cannot be verified in a Linux container, even when
# part of it (TypeScript, Kotlin) is portable. Two distinct signs, so one passing mention is not enough.
_APPLE_SDK = {
    "Xcode": re.compile(r"\bxcode(build)?\b|\.xcodeproj\b|\.xcworkspace\b", re.I),
    "the iOS simulator": re.compile(r"\bxcrun\b|\bsimctl\b|\bios simulator\b", re.I),
    "CocoaPods": re.compile(r"\bpod\s+install\b|\bcocoapods\b|\bpodfile\b", re.I),
    "Apple UI frameworks": re.compile(r"\b(uikit|swiftui|appkit)\b", re.I),
    "an iOS app delegate": re.compile(r"\b(app|ui)delegate\b", re.I),
    "Swift for iOS": re.compile(r"\bswift\s*\(ios\)|\bios\b.{0,40}\bswift\b|\bswift\b.{0,40}\bios\b", re.I),
    "App Store tooling": re.compile(r"\btestflight\b|\bapp store connect\b", re.I),
}
_INTRO_LINES = 25  # front matter and opening paragraph: an iOS section deep in a web skill is not its core
# an install path that works on Linux: a distro's package manager or a language's (pip, npm, go ...)
_LINUX_INSTALL = re.compile(r"\b(apt(-get)?|dnf|yum|pacman|apk)\s+(-\S+\s+)*install\b|"
                            r"\b(pip3?|pipx|uv\s+(tool|pip)|npm|pnpm|go|cargo|gem)\s+(-\S+\s+)*(install|i)\b")
_LINUX_NAMES = {"linux", "debian", "ubuntu", "any", "all", "unix", "posix"}


def paid_service(skill: ParsedSkill) -> RuleResult:
    """A paid plan, a private network, or the key of an API billed by use (external.metered)."""
    env_hits = [e for e in skill.env_vars if _BILLING_ENV.search(e) or external.metered(e)]
    core, optional = external.metered_lines(skill)
    hits = sorted(set(find_lines(skill.raw_text, _PAID)) | set(core))[:3]
    if env_hits:   # declared in the metadata: the need is certain, whatever the text says
        return RuleResult("executable.paid_service", Outcome.FAIL,
                          f"needs credentials of a paid service: {', '.join(env_hits)}",
                          "metadata.openclaw.requires.env")
    if hits:
        return from_hits("executable.paid_service", Outcome.FAIL,
                         "needs a paid or private service", hits)
    if optional:
        return from_hits("executable.paid_service", Outcome.WARN,
                         "can optionally use an API billed by use", optional)
    return passed("executable.paid_service", "no paid or private service needed")


def operating_system(skill: ParsedSkill) -> RuleResult:
    if skill.os and not (set(skill.os) & _LINUX_NAMES):
        return RuleResult("executable.os", Outcome.FAIL,
                          f"declares os {skill.os}: does not run on Linux", "metadata.openclaw.os")
    said = find_lines(skill.raw_text, _ONLY_ELSEWHERE)
    if said:
        return from_hits("executable.os", Outcome.FAIL, "says it runs only on macOS or Windows", said)
    apple = _apple_sdk_signs(skill.raw_text)
    if len(apple) >= 2 and min(n for n, _ in apple.values()) <= _INTRO_LINES:
        return RuleResult("executable.os", Outcome.FAIL,
                          "builds for Apple platforms, whose SDKs run only on macOS — "
                          + "; ".join(f"{what} (line {n}: {text})" for what, (n, text) in list(apple.items())[:3]),
                          f"SKILL.md:{min(n for n, _ in apple.values())}")
    hits = find_lines(skill.raw_text, _NON_LINUX, limit=8)
    if may_match(skill.raw_text, _LINUX_INSTALL) and _LINUX_INSTALL.search(skill.raw_text):
        # `brew install` as one option next to apt, pip or npm is a portable skill, not a macOS one
        hits = [h for h in hits if not re.search(r"\bbrew\b", h[1])]
    if len(hits) >= 2:
        return from_hits("executable.os", Outcome.FAIL, "macOS- or Windows-only commands", hits[:3])
    return passed("executable.os", "runs on Linux")


def _apple_sdk_signs(text: str) -> dict[str, tuple[int, str]]:
    """Each kind of Apple-SDK sign the text shows, with its first line, in the order a reading
    from the top meets them."""
    index = line_index(text)
    firsts = []
    for k, (what, pattern) in enumerate(_APPLE_SDK.items()):
        n = next((i for i in index.indices((pattern,)) if pattern.search(index.lines[i])), None)
        if n is not None:
            firsts.append((n, k, what))
    return {what: (n + 1, index.lines[n].strip()[:160]) for n, _, what in sorted(firsts)}


def binaries(skill: ParsedSkill) -> RuleResult:
    unknown = [b for b in skill.bins if b not in KNOWN_BINS]
    installs = skill.front_matter.get("install") or openclaw_meta(skill.front_matter).get("install")
    installable = _declared_installs(installs)
    still_unknown = [b for b in unknown if b not in installable]
    if still_unknown:
        return RuleResult("executable.binaries", Outcome.WARN,
                          "needs binaries with no known Debian or PyPI package: "
                          + ", ".join(still_unknown), "front matter / code blocks")
    if skill.bins:
        return passed("executable.binaries", "all binaries installable: " + ", ".join(skill.bins))
    return passed("executable.binaries", "needs no special binaries")


def _declared_installs(installs) -> set[str]:
    """Binaries an `install:` block says it provides through apt, pip or npm."""
    names: set[str] = set()
    if not isinstance(installs, list):
        return names
    for item in installs:
        if isinstance(item, dict) and str(item.get("kind", "")).lower() in {"apt", "pip", "npm", "uv", "node"}:
            for key in ("bins", "package", "formula", "module"):
                value = item.get(key)
                names.update(value if isinstance(value, list) else [str(value)] if value else [])
    return names


RULES = (gui, paid_service, operating_system, binaries)
