"""An ingest killed mid-way (SIGKILL, a real subprocess) leaves its run row and the problems
found so far in the store; a second ingest goes on without duplicating anything. An alias
bomb in one package costs that package, not the run."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import cli, write_skill
from pipeline.ingest import jsonl_workers
from pipeline.ingest.run import ingest
from workbench.workspace import Workspace

N_RECORDS = 8_000
BAD_EVERY = 200


# What `workbench ingest` runs, without the CLI around it.
_INGEST = ("import sys; from pathlib import Path; from pipeline.ingest.run import ingest; "
           "from workbench.workspace import Workspace; ingest(Workspace.open(sys.argv[1]), [Path(sys.argv[2])])")


def write_export(path, n: int = N_RECORDS) -> set[int]:
    """Distinct records (random words, so no near-duplicates) with a malformed line every
    BAD_EVERY lines; returns the numbers of the malformed lines."""
    rng = random.Random(7)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(7)) for _ in range(3000)]
    bad: set[int] = set()
    with open(path, "w") as fh:
        for lineno in range(1, n + 1):
            if lineno % BAD_EVERY == 0:
                bad.add(lineno)
                fh.write('{"name": "broken", "descr\n')
                continue
            words = " ".join(rng.choices(vocab, k=30))
            fh.write(json.dumps({"name": f"skill-{lineno}", "description": f"Process {words[:80]}.",
                                 "content": f"## Steps\n1. Read `in-{lineno}.txt` ({words}).\n"
                                            f"2. Write `out-{lineno}.txt` with `sort`.\n"}) + "\n")
    return bad


def _store(ws: Workspace) -> dict:
    with ws.db.read() as con:
        runs = con.execute("SELECT run_id, finished_at, found, new_skills, errors FROM ingest_runs").fetchall()
        errors = con.execute("SELECT run_id, file, reason FROM ingest_errors").fetchall()
        skills = con.execute("SELECT id, skill_key, source_path, ingest_run_id FROM skills").fetchall()
    return {"runs": runs, "errors": errors, "skills": skills}


def _children(pid: int) -> set[int]:
    kids = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.add(int(stat.parent.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _line(path: str) -> int:
    return int(path.rsplit("#L", 1)[1])


def test_sigkill_mid_way_keeps_the_run_row_and_its_problems_and_a_rerun_goes_on(tmp_path):
    export = tmp_path / "big.jsonl"
    bad = write_export(export)
    assert export.stat().st_size > jsonl_workers.POOL_MIN_BYTES  # the worker pool's path
    root = tmp_path / "ws"
    ws = Workspace.open(root)
    proc = subprocess.Popen([sys.executable, "-c", _INGEST, str(root), str(export)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        workers: set[int] = set()
        while time.monotonic() < deadline and proc.poll() is None:
            workers |= _children(proc.pid)
            if len(_store(ws)["errors"]) >= 2:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the ingest ended before it could be killed: " + proc.stderr.read().decode()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    # Its worker processes end with it.
    assert workers
    end = time.monotonic() + 15
    while any(_alive(w) for w in workers) and time.monotonic() < end:
        time.sleep(0.2)
    assert not [w for w in workers if _alive(w)]
    first = _store(ws)
    [(run_id, finished, found, new_skills, errors)] = first["runs"]
    assert finished is None  # interrupted, and the row says how far it got
    kept = len(first["skills"])
    assert 0 < kept < N_RECORDS - len(bad)
    assert new_skills == found == kept and errors == len(first["errors"])
    # Every malformed line before the last stored record is in the report, with its reason.
    last = max(_line(p) for _, _, p, _ in first["skills"])
    recorded = {_line(f) for _, f, _ in first["errors"]}
    assert {b for b in bad if b < last} <= recorded <= bad
    assert all(r.startswith("invalid JSON") for _, _, r in first["errors"])

    report = ingest(ws, [export])
    after = _store(ws)
    ids = [s[0] for s in after["skills"]]
    keys = [s[1] for s in after["skills"]]
    assert len(ids) == len(set(ids)) == len(set(keys)) == N_RECORDS - len(bad)
    assert report.unchanged == kept and len(report.new) == N_RECORDS - len(bad) - kept
    assert {_line(p.file) for p in report.problems} == bad
    finished_runs = [r for r in after["runs"] if r[0] == report.run_id]
    assert finished_runs[0][1] is not None and finished_runs[0][4] == len(bad)


def test_an_alias_bomb_costs_its_package_and_the_run_goes_on(tmp_path):
    from tests.pipeline.ingest.test_value_bounds import alias_bomb
    corpus = tmp_path / "corpus"
    write_skill(corpus, "bad/bomb", extra_front=alias_bomb())
    write_skill(corpus, "good/count-words", description="Count words in text files.")
    out = cli("--workspace", str(tmp_path / "ws"), "ingest", str(corpus), "--json", timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["new"] == 1 and report["errors"] == 1
    [problem] = report["problems"]
    assert problem["file"].endswith("bad/bomb/SKILL.md")
    assert problem["reason"] == "front matter expands to over 20,000 values (aliases included)"
