#!/usr/bin/env python3
"""Minimal secret scanner.

  scan_secrets.py FILE...        scan files
  git log -p ... | scan_secrets.py --patch   scan added lines of a patch stream
"""
import math
import re
import sys

RULES = [
    ("private-key", re.compile(r"-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----")),
    ("aws-access-key-id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("slack-token", re.compile(r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b")),
    ("password-assignment", re.compile(r"(?i)\b(?:password|passwd|secret|api_key|token)\s*[:=]\s*['\"]?([^'\"\s]{8,})")),
]
B64ISH = re.compile(r"[A-Za-z0-9+/=_-]{32,}")


def entropy(s):
    counts = {c: s.count(c) for c in set(s)}
    return -sum(n / len(s) * math.log2(n / len(s)) for n in counts.values())


def mask(s):
    return s[:4] + "\u2026" if len(s) > 4 else "\u2026"


def scan_line(line):
    for name, rx in RULES:
        m = rx.search(line)
        if m:
            yield name, m.group(m.lastindex or 0)
    for tok in B64ISH.findall(line):
        if entropy(tok) > 4.5:
            yield "high-entropy", tok


def scan_files(paths):
    for path in paths:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            for rule, hit in scan_line(line):
                print(f"{path}:{n}\t{rule}\t{mask(hit)}")


def scan_patch(stream):
    commit, path, lineno = "?", "?", 0
    for raw in stream:
        line = raw.rstrip("\n")
        if line.startswith("commit "):
            commit = line.split()[1][:10]
        elif line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else line[4:]
        elif line.startswith("@@"):
            m = re.search(r"\+(\d+)", line)
            lineno = int(m.group(1)) if m else 0
        elif line.startswith("+"):
            for rule, hit in scan_line(line[1:]):
                print(f"{commit}:{path}:{lineno}\t{rule}\t{mask(hit)}")
            lineno += 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--patch"]:
        scan_patch(sys.stdin)
    else:
        scan_files(sys.argv[1:])
