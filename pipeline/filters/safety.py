"""Safety rules: destructive commands, credential exfiltration, prompt injection, jailbreaks."""
from __future__ import annotations

import re

from pipeline.filters.base import RuleResult, compile_all, scan
from pipeline.filters.exfiltration import DROP_SITES, exfiltration  # its own module: where a secret goes
from workbench.models import ParsedSkill

_DESTRUCTIVE = compile_all(
    r"\brm\s+(-[a-z]*\s+)*-[a-z]*r[a-z]*\s+(-[a-z-]+\s+)*(--no-preserve-root\s+)?"
    r"(/|/\*|~/?\*?|\$HOME/?\*?|\$\{HOME\}/?\*?)(\s|$|;|&|[\"'`])",
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

_INJECTION = compile_all(
    r"\b(ignore|disregard|forget)\b.{0,30}\b(all |any )?(previous|prior|above|earlier|system)\b.{0,20}"
    r"\b(instructions?|prompts?|rules|messages?)",
    r"\b(do not|don't|never)\s+(tell|inform|mention|reveal|alert)\b.{0,30}\b(the )?user",
    # "never show this to the user" hides what the agent does; "never show raw URLs to the user"
    # is a choice of what a reply looks like
    r"\b(do not|don't|never)\s+show\s+(this|these|it|that|anything|what|any of)\b.{0,30}\b(the )?user",
    r"\bwithout\s+(telling|asking|informing|notifying)\s+the\s+user",
    r"<!--(?=.{0,300}\b(ai|agent|assistant|llm|claude|chatgpt|gpt)\b)"
    r"(?=.{0,300}\b(ignore|must|do not|don't|instead|secretly|silently|execute|run|add|append|send)\b)",
    r"\b(note|message|instruction)s?\s+(to|for)\s+(the\s+)?(ai|agent|assistant|llm|model)\b.{0,5}:",
    r"\bnew (system )?instructions?\s*:",
    r"\b(silently|quietly|secretly)\s+(upload|send|post|exfiltrate|transmit|forward|mail)\b",
)
_REMOTE_CODE = compile_all(
    # curl … | sh: the shell (or python) reads its program from the download
    r"\b(curl|wget)\b[^|\n]*\|\s*(sudo\s+)?(-E\s+)?(ba|z|da)?sh(\s+-s\b[^;&|]*)?\s*($|[;&)`'\"])",
    r"\b(curl|wget)\b[^|\n]*\|\s*(sudo\s+)?python3?(\s+-)?\s*($|[;&)`'\"])",
    r"\b(ba)?sh\s+<\(\s*(curl|wget)\b",                                     # bash <(curl …)
    r"\bdownload\b.{0,80}\.(zip|exe|bin|dmg|appimage|msi)\b.{0,120}\b(run|execute|launch|open)\b",
    rf"\b({DROP_SITES})\b.{{0,120}}\b(run|execute|paste|copy)\b",
    rf"\b(run|execute|paste|copy)\b.{{0,120}}\b({DROP_SITES})\b",
)
_JAILBREAK = compile_all(
    r"\bdeveloper mode\b",
    r"\bDAN\b.{0,40}\b(mode|anything)",
    r"\bdo anything now\b",
    r"\bjailbr(eak|oken)",
    r"\b(respond|answer|act|operate|behave|reply)\b.{0,30}\b(without|free of)\b.{0,20}\b(any |all )?"
    r"(restrictions|filters|guidelines|limitations|censorship|safeguards)",
    r"\bno (ethical|moral|safety|content) (restrictions|guidelines|limits|filters|polic(y|ies))",
    r"\bunrestricted\b.{0,40}\b(mode|assistant|analyst|ai|persona|model)\b",
    r"\bstay in character\b",
    r"\bnever (refuses?|declines?)\b",
    r"\byou are (now )?(no longer|not) (bound|restricted|limited)",
    r"\b(ignore|bypass|override)\b.{0,20}\b(your|the|all)\b.{0,10}\b(safety|content|ethical)\s+"
    r"(guidelines|policies|filters|rules)",
)


def destructive(skill: ParsedSkill) -> RuleResult:
    return scan("safety.destructive", skill.raw_text, _DESTRUCTIVE, "wipes a system or data irrecoverably",
                "no command that wipes the system, a disk or the home folder")


def prompt_injection(skill: ParsedSkill) -> RuleResult:
    return scan("safety.prompt_injection", skill.raw_text, _INJECTION,
                "text aimed at the agent that overrides its instructions or hides actions",
                "no instruction aimed at the agent reading the skill")


def remote_code(skill: ParsedSkill) -> RuleResult:
    """Code fetched from the network and run unseen: the pattern of skill-registry malware."""
    return scan("safety.remote_code", skill.raw_text, _REMOTE_CODE,
                "downloads code and runs it without it being part of the skill",
                "runs no code fetched from the network")


def jailbreak(skill: ParsedSkill) -> RuleResult:
    return scan("safety.jailbreak", skill.raw_text, _JAILBREAK, "jailbreak text", "no jailbreak text")


RULES = (destructive, exfiltration, prompt_injection, remote_code, jailbreak)
