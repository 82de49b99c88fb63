"""The fixed parts of a synthesized bundle: Dockerfile, tests/test.sh (pipeline/synth/test_sh.py), the pytest prelude,
and how instruction.md and tests/test_outputs.py are laid out from the steps' fragments."""
from __future__ import annotations

import hashlib
import random
import re

from .fidelity_rubric import usage_phrase
from .recipes.base import Check
from .test_sh import TEST_SH


def render_dockerfile(base_image: str, run_lines: list[str] = (), skills: bool = False) -> str:
    lines = [f"FROM {base_image}", "STOPSIGNAL SIGKILL", "WORKDIR /app", "COPY app/ /app/"]
    if skills:   # installed skill packages, read-only as an agent's installed skills are
        lines += ["COPY skills/ /skills/", "RUN chmod -R a-w,a+rX /skills"]
    lines += [f"RUN {r}" for r in run_lines]
    return "\n".join(lines) + "\n"


def render_test_sh() -> str:
    return TEST_SH


# Helpers every generated test file starts with (stdlib + pytest only, Python 3.11).
TEST_PRELUDE = '''import configparser
import contextlib
import csv
import hashlib
import json
import os
import hashlib
import random
import re
import shutil
import sqlite3
import stat
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path


def read_text(path):
    return Path(path).read_text(encoding="utf-8")


def read_lines(path):
    """Non-blank lines, without line endings or trailing spaces."""
    return [line.rstrip() for line in read_text(path).splitlines() if line.strip()]


def read_table(path, fmt="csv"):
    """(column names, rows as dicts) from a CSV, TSV, JSON-array or JSON Lines file."""
    if fmt in ("csv", "tsv"):
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh, delimiter="," if fmt == "csv" else "\\t")
            rows = list(reader)
            return [c.strip() for c in (reader.fieldnames or [])], [
                {(k or "").strip(): v for k, v in r.items()} for r in rows]
    if fmt == "json":
        data = json.loads(read_text(path))
        assert isinstance(data, list), f"{path}: expected a JSON array"
    else:
        data = [json.loads(line) for line in read_text(path).splitlines() if line.strip()]
    assert all(isinstance(r, dict) for r in data), f"{path}: expected objects"
    return (list(data[0].keys()) if data else []), data


def same(actual, expected, tol=0.011):
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        try:
            return abs(float(actual) - float(expected)) <= tol
        except (TypeError, ValueError):
            return False
    return str(actual).strip() == str(expected)


def check_rows(rows, columns, expected, ordered=True, tol=0.011):
    """Compare rows (dicts) with expected value lists, in order or as a multiset."""
    got = [[r.get(c) for c in columns] for r in rows]
    assert len(got) == len(expected), f"expected {len(expected)} rows, found {len(got)}"
    if ordered:
        for i, (g, e) in enumerate(zip(got, expected)):
            assert all(same(a, b, tol) for a, b in zip(g, e)), f"row {i + 1}: {g} does not match expected {e}"
        return
    left = list(got)
    for e in expected:
        hit = next((g for g in left if all(same(a, b, tol) for a, b in zip(g, e))), None)
        assert hit is not None, f"no row matches expected {e}"
        left.remove(hit)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def files_under(root):
    """Relative paths of the regular files under root, sorted."""
    root = Path(root)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def same_files(a, b):
    """True when a and b (two files or two folders) hold identical files."""
    a, b = Path(a), Path(b)
    if not (a.exists() and b.exists()):
        return False
    if a.is_file() or b.is_file():
        return a.is_file() and b.is_file() and a.read_bytes() == b.read_bytes()
    names = files_under(a)
    return names == files_under(b) and all((a / n).read_bytes() == (b / n).read_bytes() for n in names)


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


CRON_NAMES = {n: i for i, n in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
CRON_NAMES.update({n: i + 1 for i, n in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                                    "sep", "oct", "nov", "dec"])})


def cron_field(field, lo, hi):
    """The sorted values a crontab time field matches (lists, ranges, steps and names)."""
    out = set()
    for part in field.lower().split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/")
            step = int(s)
        conv = lambda x: CRON_NAMES[x] if x in CRON_NAMES else int(x)  # noqa: E731
        if part == "*":
            a, b = lo, hi
        elif "-" in part:
            a, b = (conv(x) for x in part.split("-"))
        else:
            a = conv(part)
            b = hi if step != 1 else a
        assert lo <= a <= b <= hi, f"field {field!r} is out of range {lo}-{hi}"
        out.update(range(a, b + 1, step))
    return sorted(out)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


@contextlib.contextmanager
def scratch(*paths):
    """Run the solution's code inside: afterwards each path (and any folder made for it) is
    exactly as before (content, mode, times; absent stays absent), so no other test can read
    what this one produced, and "run it yourself" is checked on the solution's own run."""
    keep = Path(tempfile.mkdtemp(prefix="scratch-"))
    saved, made = [], []
    for i, p in enumerate(Path(x) for x in paths):
        top = p
        while not top.parent.exists():
            top = top.parent
        if not top.exists():
            made.append(top)
        if p.is_dir() and not p.is_symlink():
            shutil.copytree(p, keep / str(i), symlinks=True)
        elif p.exists() or p.is_symlink():
            shutil.copy2(p, keep / str(i), follow_symlinks=False)
        saved.append((p, keep / str(i)))
    try:
        yield
    finally:
        for p, copy in saved:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
            if copy.exists() or copy.is_symlink():
                shutil.move(str(copy), str(p))
        for top in made:
            if top.is_dir() and not top.is_symlink():
                shutil.rmtree(top)
            elif top.exists():
                top.unlink()
        shutil.rmtree(keep, ignore_errors=True)
'''


# --- phrasing of requirement sentences ------------------------------------------------------------
# Families share a few sentence shapes (the column, order and JSON-type sentences of every table
# result; "Write `x` as a ..."). Each shape has several wordings with the same meaning; the one a
# sentence gets is drawn from a hash of the sentence itself (paths and columns included), so the
# instruction and the test docstring, rendered apart, always agree, and tasks differ.
_P = r"(`[^`]+`)"
REPHRASE: list[tuple[re.Pattern, list[str]]] = [
    (re.compile(rf"^Use exactly the columns (.+) in this order in {_P}\.$"),
     ["Use exactly the columns {0} in this order in {1}.", "Give {1} exactly the columns {0}, in this order.",
      "The columns of {1} are {0}, in this order, and no others.", "Keep to the columns {0}, in that order, in {1}."]),
    (re.compile(rf"^Order the rows of {_P} (.+)\.$"),
     ["Order the rows of {0} {1}.", "Sort the rows of {0} {1}.", "List the rows of {0} {1}.",
      "Keep the rows of {0} ordered {1}."]),
    (re.compile(rf"^Write the values of (.+) in {_P} as JSON numbers and all other values as JSON strings\.$"),
     ["Write the values of {0} in {1} as JSON numbers and all other values as JSON strings.",
      "In {1}, store {0} as JSON numbers and every other value as a JSON string.",
      "Make {0} JSON numbers in {1}, and everything else JSON strings."]),
    (re.compile(rf"^Write {_P} as (a|an) (.+)$"),
     ["Write {0} as {1} {2}", "Create {0} as {1} {2}", "Save {0} as {1} {2}", "Produce {0} as {1} {2}"]),
    (re.compile(rf"^Write {_P} (listing|with) (.+)$"),
     ["Write {0} {1} {2}", "Create {0} {1} {2}", "Save {0} {1} {2}"]),
    (re.compile(rf"^Copy {_P} to {_P}\.$"),
     ["Copy {0} to {1}.", "Place a copy of {0} at {1}.", "Put an identical copy of {0} at {1}."]),
]


def phrase(sentence: str) -> str:
    """One of the wordings of the sentence's shape (the sentence itself when it has none)."""
    for pattern, wordings in REPHRASE:
        m = pattern.match(sentence)
        if m:
            pick = int(hashlib.sha256(sentence.encode()).hexdigest(), 16) % len(wordings)
            return wordings[pick].format(*m.groups())
    return sentence


def _indent(code: str, n: int = 4) -> str:
    pad = " " * n
    return "\n".join(pad + line if line.strip() else "" for line in code.strip("\n").splitlines())


def docstring(sentence: str) -> str:
    """A requirement sentence as a test docstring: the same words, without Markdown backticks
    (the rubric compares docstrings with the instruction's sentences as plain text)."""
    return sentence.replace("`", "")


def render_tests(task_name: str, version: str, steps_checks: list[list[Check]]) -> str:
    out = [f'"""Checks for {task_name} (offline synthesizer v{version}); one test per requirement."""',
           TEST_PRELUDE]
    seen: set[str] = set()
    for k, checks in enumerate(steps_checks, 1):
        for check in checks:
            for short, body in check.tests:
                name = re.sub(r"[^a-z0-9_]+", "_", f"test_s{k}_{short}".lower())
                base, n = name, 2
                while name in seen:
                    name, n = f"{base}_{n}", n + 1
                seen.add(name)
                out.append(f'\ndef {name}():\n    """{docstring(phrase(check.sentence))}"""\n{_indent(body)}\n')
    return "\n".join(out)


# --- instruction.md ------------------------------------------------------------------------------
# The fixed paragraphs used to be one text for every task (a third of a short instruction's
# 5-grams). Each is now said one of several ways, chosen by the task's own random source, and a
# note appears only where the task needs it.

TOOLS = ["bash", "coreutils", "grep", "sed", "awk", "python3 with its standard library", "jq", "sqlite3", "git",
         "tar", "gzip", "bzip2", "xz", "zip", "make", "bc", "procps"]
OPENINGS = [
    "Everything for this task lives under `/app` in a Linux container.",
    "You are in a Linux container; the task's files are under `/app`.",
    "Work in `/app` inside this Linux container.",
    "The files you start from are in `/app` on this Linux machine.",
    "This is a Linux container and `/app` is where the work happens.",
    "",
]
CHAINED = [
    "The {n} steps build on each other, so leave each file where you create it.",
    "Each of the {n} steps reads what an earlier one left behind; keep your files in place.",
    "Later steps read what earlier steps write: do not move or delete your own results.",
    "Do the {n} steps in order; every one depends on files the previous ones made.",
    "There are {n} steps, and each uses the output of the one before it.",
]
PACKAGES_NOTE = [
    "The skill packages are installed read-only, each with its `SKILL.md` and bundled files: {where}.",
    "Installed skills (read-only; start with each one's `SKILL.md`): {where}.",
    "You have these skills installed, read-only, with their `SKILL.md` and files: {where}.",
]
NOTE_HEADINGS = ["Notes", "Conventions", "Ground rules", "Good to know", "Rules of the game"]
NOTE_TOOLS = [
    "The network is off; installed are {tools}.",
    "No network access. Available: {tools}.",
    "You cannot reach the internet, but {tools} are at hand.",
    "Offline machine; the toolbox is {tools}.",
]
NOTE_KEEP = [
    "Leave what earlier steps made, and the files under `/app/input`, unchanged unless a step says otherwise.",
    "Files under `/app/input` and those of earlier steps must stay as they are unless a step asks to move them.",
    "Do not edit or remove earlier results or anything in `/app/input`, except where a step says so.",
]
NOTE_SORT = [
    "Sorted text means byte order, as `LC_ALL=C sort` gives, unless a step says otherwise.",
    "Sort text in plain character-code (C locale) order unless told otherwise.",
    "Text order is the C locale's: compare characters by their code.",
]
NOTE_ROUND = [
    "Values rounded to two decimals are compared with a tolerance of 0.01.",
    "Two-decimal numbers may differ from the expected ones by at most 0.01.",
    "A tolerance of 0.01 applies to numbers given with two decimals.",
]
NOTE_NAMES = [
    "Use exactly the paths and names given for files, folders, tables and keys.",
    "Names are checked exactly: spell paths, tables and keys as written.",
    "Every path and name in the steps is literal.",
]
_SORT_WORDS = re.compile(r"\b(sort|sorted|ascending|descending|order)\b", re.I)
_ROUND_WORDS = re.compile(r"\b(round|rounded|decimals?)\b", re.I)
_PATH = re.compile(r"`(/app/[^`\s]*)`")


def _notes(rng: random.Random, n_steps: int, sentences: list[str]) -> list[str]:
    tools = list(TOOLS)
    rng.shuffle(tools)
    notes = [rng.choice(NOTE_TOOLS).format(tools=", ".join(tools[:-1]) + " and " + tools[-1])]
    if n_steps > 1:
        notes.append(rng.choice(NOTE_KEEP))
    text = " ".join(sentences)
    if _SORT_WORDS.search(text):
        notes.append(rng.choice(NOTE_SORT))
    if _ROUND_WORDS.search(text):
        notes.append(rng.choice(NOTE_ROUND))
    if rng.random() < 0.5:
        notes.append(rng.choice(NOTE_NAMES))
    rng.shuffle(notes)
    return notes


def names_unmade(intro: str, known: set[str]) -> bool:
    """True when an intro names a path under /app that neither exists at the start nor was named by
    an earlier step: such an intro would open a step by citing a file the agent has not made yet
    (an adapter's output that the same step's first requirements create). A path inside a known
    folder (a name without a dot: a repository, a deploy root) counts as known: earlier steps
    place their results there under relative names (`data/<file>`)."""
    for p in _PATH.findall(intro):
        p = p.rstrip("/")
        if not any(q == p or q.startswith(p + "/") or (p.startswith(q + "/") and "." not in q.rsplit("/", 1)[-1])
                   for q in known):
            return True
    return False


def _first_sentence(text: str, limit: int = 160) -> str:
    text = re.sub(r"\s+", " ", (text or "").replace("`", "'")).strip()
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    text = m.group(1) if m else text
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def claimed_skills(steps: list, categories: list[str], fidelity: list) -> list[str]:
    """instruction.md's skills list (`render_instruction`'s `skills`): only the skills a step
    exercises (rubric score 2), each with the steps that use it and how; a step below 2 is
    connective and claims no skill. `steps`: the composed PathSteps, `fidelity` their StepFidelity."""
    steps_of: dict[str, list] = {}
    first: dict[str, tuple] = {}
    for s, cat, fid in zip(steps, categories, fidelity):
        if fid.claims:
            steps_of.setdefault(s.skill_id, []).append(fid)
            first.setdefault(s.skill_id, (s, cat))
    out = []
    for sid, fids in steps_of.items():
        s, cat = first[sid]
        desc = _first_sentence(s.description)
        ks = [str(f.step) for f in fids]
        where = f"step {ks[0]}" if len(ks) == 1 else "steps " + ", ".join(ks[:-1]) + f" and {ks[-1]}"
        hows = " and ".join(dict.fromkeys(usage_phrase(f.evidence) for f in fids))
        out.append(f"**{s.skill_name.strip() or sid}** ({cat}), used in {where} ({hows})"
                   + (f": {desc}" if desc else ""))
    return out


def render_instruction(title: str, skills: list[str], sections: list[tuple[str, str, list[Check]]], *,
                       key: str, existing: set[str] | frozenset[str] = frozenset(), packages: list[str] = ()) -> str:
    """instruction.md. `skills` are rendered as given (the composer decides which the task exercises);
    `key` seeds the phrasing (same task, same words); `existing` are the paths present before the
    agent starts (inputs, what the image build made), used to drop intros that cite unmade files."""
    rng = random.Random(f"layout|{key}")
    lead = [rng.choice(OPENINGS)]
    if len(sections) > 1:
        lead.append(rng.choice(CHAINED).format(n=len(sections)))
    parts = [f"# {title}", ""]
    lead_text = " ".join(x for x in lead if x)
    if lead_text:
        parts += [lead_text, ""]
    if skills:
        parts += [rng.choice(["Skills this task exercises:", "Skills it draws on:", "Skills in play:"]), ""]
        parts += [f"- {s}" for s in skills] + [""]
    if packages:
        where = ", ".join(f"`{p}`" for p in packages)
        parts += [rng.choice(PACKAGES_NOTE).format(where=where), ""]
    known = set(existing)
    n = 1
    for k, (step_title, intro, checks) in enumerate(sections, 1):
        parts += [f"## Step {k}: {step_title}", ""]
        if intro and not names_unmade(intro, known):
            parts += [intro, ""]
        for c in checks:
            parts.append(f"{n}. {phrase(c.sentence)}")
            known.update(p.rstrip("/") for p in _PATH.findall(c.sentence))
            n += 1
        parts.append("")
    notes = _notes(rng, len(sections), [c.sentence for _, _, cs in sections for c in cs])
    parts += [f"## {rng.choice(NOTE_HEADINGS)}", ""] + [f"- {x}" for x in notes] + [""]
    return "\n".join(parts)
