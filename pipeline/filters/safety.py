"""Safety rules: destructive commands, credential exfiltration, prompt injection, jailbreaks."""
from __future__ import annotations

import re

from pipeline.filters.base import RuleResult, compile_all, find_lines, from_hits, passed
from workbench.models import Outcome, ParsedSkill

_DESTRUCTIVE = compile_all(
    r"\brm\s+(-[a-z]*\s+)*-[a-z]*r[a-z]*\s+(-[a-z-]+\s+)*(--no-preserve-root\s+)?"
    r"(/|/\*|~/?\*?|\$HOME/?\*?|\$\{HOME\}/?\*?)(\s|$|;|&|\")",
    r"--no-preserve-root",
    r"\bmkfs(\.\w+)?\s+(-\S+\s+)*/dev/(sd|hd|vd|xvd|nvme|mmcblk)",
    r"\bdd\b[^\n]*\bof=/dev/(sd|hd|vd|xvd|nvme|mmcblk)",
    r"\bshred\b[^\n]*/dev/(sd|hd|vd|xvd|nvme|mmcblk)",
    r">\s*/dev/(sd|hd|vd|xvd|nvme)[a-z]?\d*\b",
    r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:",          # the classic fork bomb
    r"\bchmod\s+(-\w+\s+)*-R\s+0?777\s+/(\s|$)",
    r"\bchown\s+(-\w+\s+)*-R\s+\S+\s+/(\s|$)",
    r"\bwipefs\s+(-\w+\s+)*/dev/",
)

_CREDENTIAL = r"(\.ssh/id_\w+|\.aws/credentials|/etc/shadow|\.netrc|\.git-credentials|" \
              r"\.kube/config|\.docker/config\.json|\.gnupg|\bprintenv\b|\benv\s*\||" \
              r"\$\{?(AWS_SECRET\w*|GITHUB_TOKEN|\w*API_KEY|\w*_TOKEN|\w*PASSWORD)\}?|\.bash_history|keychain)"
_SENDER = r"(\bcurl\b|\bwget\b|\bnc\b|\bncat\b|\bnetcat\b|\bscp\b|\bftp\b|\bsocat\b|/dev/tcp/)"
_LOCAL = re.compile(r"(localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0)")
_EXFIL_LINE = re.compile(_CREDENTIAL + r".*" + _SENDER + r"|" + _SENDER + r".*" + _CREDENTIAL, re.I)
_REMOTE_URL = re.compile(r"(https?|ftp)://(?!localhost|127\.|\[::1\])[\w.-]+\.[a-z]{2,}", re.I)
_CRED_ONLY = re.compile(_CREDENTIAL, re.I)

_INJECTION = compile_all(
    r"\b(ignore|disregard|forget)\b.{0,30}\b(all |any )?(previous|prior|above|earlier|system)\b.{0,20}"
    r"\b(instructions?|prompts?|rules|messages?)",
    r"\b(do not|don't|never)\s+(tell|inform|show|mention|reveal|alert)\b.{0,30}\b(the )?user",
    r"\bwithout\s+(telling|asking|informing|notifying)\s+the\s+user",
    r"<!--.{0,200}\b(ai|agent|assistant|llm|model|claude|gpt)\b",
    r"\b(note|message|instruction)s?\s+(to|for)\s+(the\s+)?(ai|agent|assistant|llm|model)\b.{0,5}:",
    r"\bsilently\b.{0,40}\b(upload|send|post|delete|disable|add)\b",
    r"\bnew (system )?instructions?\s*:",
)
_JAILBREAK = compile_all(
    r"\bdeveloper mode\b",
    r"\bDAN\b.{0,40}\b(mode|anything)",
    r"\bdo anything now\b",
    r"\bjailbr(eak|oken)",
    r"\b(without|free of|no longer (bound|restricted) by)\b.{0,25}\b(restrictions|filters|"
    r"guidelines|policies|rules|limitations|safety)\b.{0,40}\b(you|assistant|model|ai)\b",
    r"\byou are (now )?(no longer|not) (bound|restricted|limited)",
    r"\b(ignore|bypass|override)\b.{0,20}\b(your|the|all)\b.{0,10}\b(safety|content|ethical)\s+"
    r"(guidelines|policies|filters|rules)",
)


def destructive(skill: ParsedSkill) -> RuleResult:
    hits = find_lines(skill.raw_text, _DESTRUCTIVE)
    if hits:
        return from_hits("safety.destructive", Outcome.FAIL, "wipes a system or data irrecoverably", hits)
    return passed("safety.destructive", "no command that wipes the system, a disk or the home folder")


def exfiltration(skill: ParsedSkill) -> RuleResult:
    lines = skill.raw_text.splitlines()
    hits: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        # A credential read and a send to a remote host, on one line or two adjacent lines.
        window = " ".join(lines[i:i + 2])
        if not (_EXFIL_LINE.search(line) or (_CRED_ONLY.search(line) and _EXFIL_LINE.search(window))):
            continue
        if _LOCAL.search(window) and not _REMOTE_URL.search(window):
            continue
        hits.append((i + 1, line.strip()[:240]))
        if len(hits) >= 3:
            break
    if hits:
        return from_hits("safety.exfiltration", Outcome.FAIL, "sends credentials or secrets off the machine", hits)
    return passed("safety.exfiltration", "no credential read that is sent to another host")


def prompt_injection(skill: ParsedSkill) -> RuleResult:
    hits = find_lines(skill.raw_text, _INJECTION)
    if hits:
        return from_hits("safety.prompt_injection", Outcome.FAIL,
                         "text aimed at the agent that overrides its instructions or hides actions", hits)
    return passed("safety.prompt_injection", "no instruction aimed at the agent reading the skill")


def jailbreak(skill: ParsedSkill) -> RuleResult:
    hits = find_lines(skill.raw_text, _JAILBREAK)
    if hits:
        return from_hits("safety.jailbreak", Outcome.FAIL, "jailbreak text", hits)
    return passed("safety.jailbreak", "no jailbreak text")


RULES = (destructive, exfiltration, prompt_injection, jailbreak)
