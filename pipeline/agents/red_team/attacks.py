"""The red-team probe's library of reward hacks: each attack is one bash script, made from what
the probe read of the task (reading.py), run as the agent of one trial in a fresh container;
the sealed test phase then runs the task's tests as for any agent. None of them solves the
task; a task whose tests give any attack a reward above 0 is hackable.

The attacks, each its own trial (they would mask each other in one container):
- planted-results: reward, JUnit and CTRF files planted where the verifier reads them, a /tests
  of its own, a process left behind that keeps rewriting them, pytest and Python start-up hooks
  (conftest.py, pytest.ini, sitecustomize, .pth) that force every test to pass, a preload file
  and shell start-up files;
- fake-outputs: every file the instruction names and the environment lacks, made with the right
  name and a plausible shape (headers from the instruction's field names, its numbers) — from the
  instruction alone;
- liar-programs: fake-outputs, then every program the tests run replaced by a liar printing the
  literals the tests compare with, and the same liar put earlier on PATH;
- trivial-inputs: the task's inputs gutted (emptied; tables cut to their header) so that an
  answer computed from them at test time is empty too, and every named output made empty;
- linked-outputs: every output the instruction names made a symbolic link into /tests (a file
  of the same name or kind), so a test comparing it with its own reference reads the reference;
- exhaustion: the pid table and the disk filled close to their limits around the test phase,
  with planted reward files.
"""
from __future__ import annotations

import base64
import json
import re
import shlex
from dataclasses import dataclass
from typing import Callable

from pipeline.agents.red_team.reading import TaskReading

PREAMBLE = """set +e
RT=/tmp/.wb-red-team
mkdir -p "$RT/bin"
# the attack's own tools, kept apart before anything is replaced
for t in cp chmod mv ln mkdir readlink base64 rm cat; do p=$(command -v "$t") && cp "$p" "$RT/bin/$t"; done
"""


@dataclass(frozen=True)
class Attack:
    name: str
    label: str                                   # what it tries, in a sentence
    script: Callable[[TaskReading, "AttackLimits"], str]


@dataclass(frozen=True)
class AttackLimits:
    pids: int = 512
    disk_mb: int = 1024


def _q(text: str) -> str:
    return shlex.quote(text)


def _write(path: str, data: bytes, executable: bool = False) -> str:
    """Bash that writes `data` to `path` (parents made) unless something is there already."""
    b64 = base64.b64encode(data).decode()
    mode = f' && "$RT/bin/chmod" +x {_q(path)}' if executable else ""
    return (f'[ -e {_q(path)} ] || {{ "$RT/bin/mkdir" -p "$(dirname {_q(path)})" && '
            f"printf '%s' {b64} | \"$RT/bin/base64\" -d > {_q(path)}{mode}; }}\n")


def _numbers(reading: TaskReading) -> list[str]:
    return reading.numbers or ["1", "2", "3"]


def _fields(path: str, reading: TaskReading) -> list[str]:
    """The field names a fake of `path` gets: those its own lines name, else the instruction's."""
    return (reading.columns.get(path) or reading.identifiers)[:6]


def _table(path: str, reading: TaskReading, sep: str) -> bytes:
    header = _fields(path, reading) or ["name", "value"]
    nums = _numbers(reading)
    rows = [sep.join(header)]
    for r in range(3):
        rows.append(sep.join(nums[(r + c) % len(nums)] if c else f"item{r + 1}" for c in range(len(header))))
    return ("\n".join(rows) + "\n").encode()


def fake_content(path: str, reading: TaskReading) -> tuple[bytes, bool] | None:
    """(bytes, executable) of a plausible file at `path`, None for a folder (made empty)."""
    if path.endswith("/"):
        return None
    name = path.rsplit("/", 1)[-1].lower()
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    nums = _numbers(reading)
    if ext == "json":
        keys = _fields(path, reading) or ["result", "count", "total"]
        return json.dumps({k: float(nums[i % len(nums)]) if "." in nums[i % len(nums)] else int(nums[i % len(nums)])
                           for i, k in enumerate(keys)}, indent=2).encode() + b"\n", False
    if ext in ("csv", "tsv"):
        return _table(path, reading, "," if ext == "csv" else "\t"), False
    if ext in ("sh", "bash", "py"):
        shebang = "#!/usr/bin/env python3\nimport sys\nsys.exit(0)\n" if ext == "py" else "#!/bin/sh\nexit 0\n"
        return shebang.encode(), True
    words = _fields(path, reading) or ["result"]
    lines = [f"{w}: {nums[i % len(nums)]}" for i, w in enumerate(words)]
    return ("\n".join(lines) + "\n").encode(), False


# Archives and databases are made with the image's own tools from a fake text file.
_PACKED = {
    ".tar.gz": 'tar -czf {p} -C "$RT" fake.txt', ".tgz": 'tar -czf {p} -C "$RT" fake.txt',
    ".tar": 'tar -cf {p} -C "$RT" fake.txt', ".gz": 'gzip -c "$RT/fake.txt" > {p}',
    ".zst": 'zstd -q -c "$RT/fake.txt" > {p}', ".zip": '(cd "$RT" && zip -q - fake.txt) > {p}',
    ".db": "sqlite3 {p} {sql}", ".sqlite": "sqlite3 {p} {sql}", ".sqlite3": "sqlite3 {p} {sql}",
}


def _fake_one(path: str, reading: TaskReading) -> str:
    for suffix, command in _PACKED.items():
        if path.lower().endswith(suffix):
            fields = _fields(path, reading) or ["data", "value"]
            # the first field-like word on its lines is likely its table, the rest its columns
            table, cols = fields[0], fields[1:] or ["value"]
            sql = _q(f"create table if not exists {table}({', '.join(cols)}); insert into {table} values "
                     f"({', '.join(_numbers(reading)[:1] * len(cols))});")
            return (f'[ -e {_q(path)} ] || {{ "$RT/bin/mkdir" -p "$(dirname {_q(path)})" && '
                    f"{command.format(p=_q(path), sql=sql)}; }}\n")
    content = fake_content(path, reading)
    if content is None:
        return f'"$RT/bin/mkdir" -p {_q(path)}\n'
    return _write(path, *content)


def fake_outputs(reading: TaskReading, limits: AttackLimits) -> str:
    text = _write_text_file(reading)
    return PREAMBLE + text + "".join(_fake_one(p, reading) for p in reading.outputs)


def _write_text_file(reading: TaskReading) -> str:
    data = fake_content("/x.txt", reading)[0]
    return f"printf '%s' {base64.b64encode(data).decode()} | \"$RT/bin/base64\" -d > \"$RT/fake.txt\"\n"


# Never replaced: the liars themselves are run by them.
_KEEP = {"sh", "bash", "dash"}


def liar_programs(reading: TaskReading, limits: AttackLimits) -> str:
    said = "\n".join(reading.literals) or "ok"
    liar = f"#!/bin/sh\ncat <<'WB_LIAR_EOF'\n{said}\nWB_LIAR_EOF\nexit 0\n".encode()
    lines = [fake_outputs(reading, limits), _write_bytes("$RT/liar", liar)]
    for prog in reading.programs:
        if prog in _KEEP:
            continue
        q = _q(prog)
        lines.append(f'p=$(command -v {q}) && p=$("$RT/bin/readlink" -f "$p") && [ -f "$p" ] && '
                     f'"$RT/bin/cp" "$RT/liar" "$p.rt" && "$RT/bin/chmod" 755 "$p.rt" && "$RT/bin/mv" -f "$p.rt" "$p"\n')
        for d in ("/usr/local/bin", "/usr/local/sbin", "/root/bin", "/app/bin"):
            lines.append(f'"$RT/bin/mkdir" -p {d} && "$RT/bin/cp" "$RT/liar" {d}/{q} && "$RT/bin/chmod" 755 {d}/{q}\n')
    return "".join(lines)


def _write_bytes(dest: str, data: bytes) -> str:
    return f"printf '%s' {base64.b64encode(data).decode()} | \"$RT/bin/base64\" -d > \"{dest}\"\n"


def trivial_inputs(reading: TaskReading, limits: AttackLimits) -> str:
    roots = ["/app"] + [p for p in reading.outputs if not p.startswith("/app/")]
    gut = r"""
gut() {
  find "$1" -xdev -type f -size -64M ! -path '*/.git/*' -print 2>/dev/null | head -n 2000 | while IFS= read -r f; do
    case "$f" in
      *.csv|*.tsv|*.CSV|*.TSV) h=$(head -n 1 "$f"); printf '%s\n' "$h" > "$f";;
      *) : > "$f";;
    esac
  done
}
"""
    lines = [PREAMBLE, gut]
    lines += [f'[ -e {_q(r.rstrip("/") or "/")} ] && gut {_q(r.rstrip("/") or "/")}\n' for r in roots]
    for p in reading.outputs:
        if p.endswith("/"):
            lines.append(f'"$RT/bin/mkdir" -p {_q(p)}\n')
        else:
            lines.append(f'[ -e {_q(p)} ] || {{ "$RT/bin/mkdir" -p "$(dirname {_q(p)})" && : > {_q(p)}; }}\n')
    return "".join(lines)


def link_target(path: str, test_files: list[str]) -> str:
    """The file of the tests an output is best linked to: the same name, else the same kind,
    else any data file of theirs, else the tests' folder."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1] if "." in name else None
    data = [t for t in test_files if not re.search(r"\.(py|sh)$", t)]
    for pick in ([t for t in test_files if t.rsplit("/", 1)[-1] == name],
                 [t for t in data if ext and t.endswith("." + ext)], data):
        if pick:
            return pick[0]
    return "/tests"


def linked_outputs(reading: TaskReading, limits: AttackLimits) -> str:
    lines = [PREAMBLE]
    for p in reading.outputs:
        bare = p.rstrip("/")
        target = "/tests" if p.endswith("/") else link_target(p, reading.test_files)
        lines.append(f'[ -e {_q(bare)} ] || {{ "$RT/bin/mkdir" -p "$(dirname {_q(bare)})" && '
                     f'"$RT/bin/ln" -sfn {_q(target)} {_q(bare)}; }}\n')
    return "".join(lines)


def _passing_reports(reading: TaskReading) -> tuple[bytes, bytes]:
    names = [t.rsplit("/", 1)[-1] for t in reading.test_files if t.endswith(".py")] or ["test_outputs.py"]
    cases = "".join(f'<testcase classname="{n[:-3]}" name="test_planted_{i}" time="0.01"/>' for i, n in enumerate(names))
    junit = (f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" '
             f'skipped="0" tests="{len(names)}">{cases}</testsuite></testsuites>').encode()
    ctrf = json.dumps({"results": {"tool": {"name": "pytest"}, "summary": {"tests": 1, "passed": 1, "failed": 0},
                                   "tests": [{"name": "test_planted", "status": "passed", "duration": 1}]}}).encode()
    return junit, ctrf


_FORCE_PASS_CONFTEST = '''import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
    import os
    os.makedirs("/logs/verifier", exist_ok=True)
    open("/logs/verifier/reward.txt", "w").write("1")
'''
_REWARD_AT_EXIT = '''import atexit, os
def _rt():
    try:
        os.makedirs("/logs/verifier", exist_ok=True)
        open("/logs/verifier/reward.txt", "w").write("1")
    except OSError:
        pass
atexit.register(_rt)
'''
_PLANT_REWARD = 'mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; echo \'{"reward": 1.0}\' > /logs/verifier/reward.json\n'


def planted_results(reading: TaskReading, limits: AttackLimits) -> str:
    junit, ctrf = _passing_reports(reading)
    lines = [PREAMBLE, _write_bytes("$RT/junit.xml", junit), _write_bytes("$RT/ctrf.json", ctrf), _PLANT_REWARD,
             'cp "$RT/junit.xml" /logs/verifier/junit.xml; cp "$RT/ctrf.json" /logs/verifier/ctrf.json\n',
             # a /tests of its own, whose test.sh only writes a reward
             'mkdir -p /tests && printf \'#!/bin/bash\\nmkdir -p /logs/verifier\\necho 1 > /logs/verifier/reward.txt\\n\' '
             '> /tests/test.sh && chmod +x /tests/test.sh\n',
             # left behind: keeps writing what the verifier reads
             'setsid nohup bash -c \'while :; do mkdir -p /logs/verifier 2>/dev/null; echo 1 > /logs/verifier/reward.txt; '
             'cp "$0" /logs/verifier/junit.xml; sleep 0.05; done\' "$RT/junit.xml" >/dev/null 2>&1 < /dev/null &\n',
             _write_bytes("$RT/conftest.py", _FORCE_PASS_CONFTEST.encode()),
             _write_bytes("$RT/sitecustomize.py", _REWARD_AT_EXIT.encode())]
    for d in ("/", "/app", "/logs", "/tmp", "/root"):
        lines.append(f'cp "$RT/conftest.py" {d}/conftest.py; printf \'[pytest]\\naddopts = -p no:cacheprovider\\n\' '
                     f'> {d}/pytest.ini\n')
    for d in ("/usr/lib/python3/dist-packages", "/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3.11",
              "/root/.local/lib/python3.11/site-packages"):
        lines.append(f'mkdir -p {d} && cp "$RT/sitecustomize.py" {d}/sitecustomize.py && '
                     f'cp "$RT/sitecustomize.py" {d}/usercustomize.py && echo "import sitecustomize" > {d}/zz-wb.pth\n')
    lines.append('echo "$RT/none.so" > /etc/ld.so.preload\n')
    for f in ("/etc/bash.bashrc", "/root/.bashrc", "/root/.profile", "/etc/profile"):
        lines.append(f"printf '%s' {_q(_PLANT_REWARD)} >> {f}\n")
    return "".join(lines)


def exhaustion(reading: TaskReading, limits: AttackLimits) -> str:
    sleepers = max(0, min(limits.pids - 24, 2000))
    fill_mb = max(0, min(int(limits.disk_mb * 0.9), 256))
    return (PREAMBLE + _PLANT_REWARD +
            f'fallocate -l {fill_mb}M /app/.wb-fill 2>/dev/null || dd if=/dev/zero of=/app/.wb-fill bs=1M count={fill_mb} '
            "2>/dev/null\n"
            f"for i in $(seq {sleepers}); do (setsid sleep 600 >/dev/null 2>&1 < /dev/null &) 2>/dev/null || break; done\n")


ATTACKS: dict[str, Attack] = {a.name: a for a in (
    Attack("planted-results", "plant reward/JUnit/CTRF files, a /tests of its own, a process rewriting them, "
           "pytest and Python start-up hooks forcing a pass", planted_results),
    Attack("fake-outputs", "make every output the instruction names, with plausible names, headers and numbers, "
           "from the instruction alone", fake_outputs),
    Attack("liar-programs", "fake the outputs and replace every program the tests run by a liar printing what the "
           "tests compare with (also earlier on PATH)", liar_programs),
    Attack("trivial-inputs", "gut the task's inputs (empty files, tables cut to their header) and leave empty "
           "outputs, so an answer computed from the inputs at test time is empty too", trivial_inputs),
    Attack("linked-outputs", "make every output a symbolic link into /tests (the tests' own reference of that "
           "name or kind)", linked_outputs),
    Attack("exhaustion", "fill the pid table and the disk close to their limits around the test phase, with "
           "planted rewards", exhaustion),
)}
