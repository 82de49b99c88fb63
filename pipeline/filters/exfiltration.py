"""safety.exfiltration: a secret leaves the machine for a place it does not belong.

A token sent to the service it belongs to (`$NOTION_TOKEN` to api.notion.com, `$ES_PASSWORD`
to `$ES_BASE_URL`, a bearer token in the Authorization header of the API a skill works with)
is how a token is used — whether the skill may need an account is a needs.* matter, not a
safety one. A key file or the environment read and uploaded anywhere, a vendor's token sent to
another host, anything sent to a paste site, a webhook catcher, a raw IP or through a raw
socket is exfiltration.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.filters.base import RuleResult, from_hits, passed
from pipeline.filters.required_literals import line_index
from workbench.models import Outcome, ParsedSkill

RULE = "safety.exfiltration"
# Files and commands whose output is a secret wherever it is sent.
_SECRET_SOURCE = re.compile(
    r"((~|\$HOME|\$\{HOME\}|/root|/home/[\w.-]+)/\.(ssh|aws|gnupg|kube|docker|netrc|pgpass|"
    r"git-credentials|bash_history|config/gh)"
    # public parts of ~/.ssh (known_hosts, config, authorized_keys, *.pub) are no secret
    r"(/(?!known_hosts|config\b|authorized_keys|[\w.-]*\.pub\b)[\w.-]+)?(?![\w/.-])|/etc/shadow|\bprintenv\b|"
    r"\benv\s*[|>]|keychain)", re.I)
_SECRET_VAR = re.compile(r"\$\{?((?:AWS_SECRET\w*|GITHUB_TOKEN|\w*API_KEY|\w*_TOKEN|\w*PASSWORD))\}?", re.I)
# A command that sends data somewhere: uploads, raw sockets, remote copies.
_SENDER = re.compile(
    r"(\b(curl|wget)\b.*(\s(-F|--form|-d|--data[\w-]*|-T|--upload-file|--post-(data|file))\b|"
    r"-X\s*(POST|PUT)|\|\s*(curl|wget))|\|\s*(curl|wget)\b|\b(nc|ncat|netcat|socat|scp|ftp|sftp)\b|"
    r"/dev/tcp/|\brsync\b.*\w@[\w.-]+:)", re.I)
_RAW_SOCKET = re.compile(r"\b(nc|ncat|netcat|socat)\b|/dev/tcp/", re.I)
_LOCAL = re.compile(r"(?<![\w.-])(localhost|127(?:\.\d{1,3}){3}|\[::1\]|0\.0\.0\.0)(?![\w.-])")
_URL_HOST = re.compile(r"(?:https?|ftp)://(?:[^@/\s]+@)?(\[[^\]]+\]|[^/\s:'\"`?]+)", re.I)
# `curl "$ES_BASE_URL/_search"`: the destination is a variable the skill configures
_URL_VAR = re.compile(r"(?:^|[\s\"'=])\$\{?([A-Za-z_]\w*(?:URL|HOST|ENDPOINT|DOMAIN|SERVER|ADDR)\w*)\}?", re.I)
_RAW_IP = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$|^\[")
# Places that take anything anyone posts: paste bins, file drops, webhook catchers, tunnels.
DROP_SITES = (r"glot\.io|pastebin\.com|paste\.ee|hastebin|rentry\.co|ghostbin|termbin\.com|transfer\.sh|0x0\.st|"
              r"ix\.io|file\.io|webhook\.site|requestbin|pipedream\.net|ngrok(-free)?\.(io|app)|"
              r"discord(app)?\.com/api/webhooks|burpcollaborator|interact\.sh|oast\.")
_DROP = re.compile(DROP_SITES, re.I)
# The secret is presented to authenticate, not carried as data.
_AUTH_POSITION = re.compile(
    r"(-H|--header)\s*[\"']?\s*(Authorization|[\w-]*(api[-_]?key|token|auth)[\w-]*)\s*:"
    r"|\s(-u|--user)\s|[?&](key|token|api_key|apikey|access_token)=", re.I)
_ASSIGNED = re.compile(r"^\s*(?:export\s+|local\s+)?([A-Za-z_]\w*)=")
_IDENTITY_ARG = re.compile(r"(\s-i\s+\S+|IdentityFile\s+\S+|ssh-add\s+\S+)")
_WINDOW = 4  # a secret gathered a few lines above the upload still counts
# Words of a variable name that say what kind of secret it is, not whose.
_GENERIC = {"API", "KEY", "TOKEN", "SECRET", "ACCESS", "PASSWORD", "PASS", "AUTH", "PERSONAL", "BEARER",
            "CLIENT", "APP", "PRIVATE", "USER", "USERNAME", "ID", "OAUTH", "REFRESH", "SERVICE", "MY",
            "DEFAULT", "PAT", "BOT", "ADMIN", "MASTER", "READ", "WRITE", "SESSION", "PROJECT", "PROD", "DEV"}
# Vendors whose hosts do not spell the variable's prefix.
_VENDOR_HOSTS = {"GH": "github", "GCP": "googleapis", "GOOGLE": "googleapis", "GEMINI": "googleapis",
                 "AWS": "amazonaws", "AZURE": "azure", "HF": "huggingface", "CLAUDE": "anthropic",
                 "GITLAB": "gitlab", "CF": "cloudflare", "CLOUDFLARE": "cloudflare"}


@dataclass(frozen=True)
class _Unit:
    """One command: a line and the lines its trailing backslashes continue it onto."""
    first: int
    last: int
    text: str


def _units(lines: list[str]) -> list[_Unit]:
    out: list[_Unit] = []
    start, parts = None, []
    for i, line in enumerate(lines):
        if start is None:
            start = i
        parts.append(line.rstrip().removesuffix("\\"))
        if not line.rstrip().endswith("\\"):
            out.append(_Unit(start, i, " ".join(parts)))
            start, parts = None, []
    if start is not None:
        out.append(_Unit(start, len(lines) - 1, " ".join(parts)))
    return out


def _hosts(text: str) -> list[str]:
    return [h.lower() for h in _URL_HOST.findall(text)]


def _sends_off_machine(text: str) -> bool:
    if not _SENDER.search(text):
        return False
    hosts = _hosts(text)
    if hosts:
        return not all(_LOCAL.fullmatch(h) for h in hosts)
    return not _LOCAL.search(text)


def _vendor_words(name: str) -> list[str]:
    words = [w for w in name.upper().split("_") if w and w not in _GENERIC]
    return words


def _belongs(var: str, text: str, hosts: list[str]) -> bool:
    """Is the secret in `var` sent to its own service?"""
    vendor = _vendor_words(var)
    if not vendor:
        # `$TOKEN`, `$API_KEY`: whose is not said; presented as credentials to a named API it
        # is the skill using its service
        return bool(hosts) and bool(_AUTH_POSITION.search(text))
    for dest in _URL_VAR.findall(text):
        if set(vendor) & set(_vendor_words(dest)):
            return True
    for host in hosts:
        labels = host.split(".")
        for word in vendor:
            w = _VENDOR_HOSTS.get(word, word.lower())
            if w in labels or (len(w) >= 4 and any(w in label for label in labels)):
                return True
    return False


def _leaks(unit: _Unit, lines: list[str], other_senders: set[int]) -> list[int]:
    """Line indices of the secrets this sending command carries somewhere they do not belong.
    A secret on a line of another sending command nearby is that command's, judged there."""
    text = unit.text
    hosts = _hosts(text)
    hostile = _RAW_SOCKET.search(text) or _DROP.search(text) or any(
        _RAW_IP.match(h) and not _LOCAL.fullmatch(h) for h in hosts)
    found: list[int] = []
    for j in range(max(0, unit.first - _WINDOW), min(len(lines), unit.last + 2)):
        line = lines[j]
        if not unit.first <= j <= unit.last and j in other_senders:
            continue
        if _SECRET_SOURCE.search(line):
            found.append(j)
            continue
        if not unit.first <= j <= unit.last:
            # a token on a line nearby travels only through a variable this command reads
            assigned = _ASSIGNED.match(line)
            if not assigned or not re.search(rf"\$\{{?{assigned.group(1)}\b", text):
                continue
        if any(hostile or not _belongs(v, text, hosts) for v in _SECRET_VAR.findall(line)):
            found.append(j)
    return found


def exfiltration(skill: ParsedSkill) -> RuleResult:
    # Only a command with a line that holds one of _SENDER's literals can send (joining continued
    # lines and dropping `-i key` only add spaces, and those literals hold none).
    index = line_index(skill.raw_text)
    sending = set(index.indices((_SENDER,)))
    if not sending:
        return passed(RULE, _CLEAN)
    original = index.lines
    # A key passed with -i authenticates a copy; it is not what is being sent.
    identity = set(index.indices((_IDENTITY_ARG,)))
    lines = [_IDENTITY_ARG.sub(" ", ln) if i in identity else ln for i, ln in enumerate(original)]
    hits: list[tuple[int, str]] = []
    senders = [u for u in _units(lines) if not sending.isdisjoint(range(u.first, u.last + 1))
               and _sends_off_machine(u.text)]
    sender_lines = {j for u in senders for j in range(u.first, u.last + 1)}
    for unit in senders:
        secrets = _leaks(unit, lines, sender_lines)
        if not secrets:
            continue
        for j in dict.fromkeys([*(s for s in secrets if s < unit.first), unit.first, *secrets]):
            if (j + 1, original[j].strip()[:240]) not in hits:
                hits.append((j + 1, original[j].strip()[:240]))
        if len(hits) >= 3:
            break
    if hits:
        return from_hits(RULE, Outcome.FAIL, "sends credentials or secrets off the machine, "
                         "not to the service they belong to", hits[:3])
    return passed(RULE, _CLEAN)


_CLEAN = "no credential read that is sent to another host"
