"""Ingest + curation filters, packages/s (issue 25 item 6: >= 50/s on the dev corpus, the
bundled-code scan included), against today's path in the same run.

`old` is the code of a git revision (--baseline; default the commit before issue 25 item 6),
unpacked with `git archive` into a temporary folder; `new` is this checkout, once as ingest
runs it (worker processes, one a CPU) and once with `workers=1` (all in one process: what the
rules alone gained). Each measurement is a fresh process ingesting into a fresh workspace;
the whole ingest is timed (discover, read, parse, filters, near-duplicate pass, store), wall
clock and CPU seconds (the process and its workers). The three alternate, repeat by repeat,
so a busy neighbour slows all of them alike. Each run digests every verdict (skill key, rule,
outcome, evidence, location): old and new must be identical. The near-duplicate verdicts are
digested apart: which of two near-duplicates counts as older follows the commit it was stored
in (ingest commits every 40 items once 0.25 s have passed), so at another speed a commit may hold
other skills and a pair may be kept the other way round, in the old code as in the new.

Corpora: a generated one (--skills; packages shaped like real ones: a SKILL.md with sections,
code blocks and the odd credential, bundled scripts, reference documents, binary assets and
now and then a large file), and with --corpus DIR a real one besides (the dev corpus:
../shared/corpora/dev). The store write alone is timed too: the Arrow batch ingest uses
against row-by-row `executemany` on the same rows.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from workbench.store import skills as skill_store  # noqa: E402
from workbench.workspace import Workspace  # noqa: E402

BASELINE = "3c092340f147028e1dd59afd306128cad00d81e0"   # the commit before issue 25 item 6

# One ingest in a fresh process: argv = code folder, workspace, corpus, workers (0: the default).
_CHILD = r"""
import hashlib, json, os, sys, time
from pathlib import Path
code, ws_dir, corpus, workers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, code)
import pipeline
from pipeline.ingest.run import ingest
from workbench.workspace import Workspace
ws = Workspace.open(Path(ws_dir))
t0, c0 = time.perf_counter(), os.times()
report = ingest(ws, [Path(corpus)], **({"workers": workers} if workers else {}))
wall, c1 = time.perf_counter() - t0, os.times()
with ws.db.read() as con:
    rows = con.execute("SELECT s.skill_key, v.rule, v.outcome, v.evidence, coalesce(v.location, '') "
                       "FROM skills s JOIN filter_verdicts v ON v.skill_id = s.id ORDER BY 1, 2").fetchall()
def digest(rows):
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:12]
print(json.dumps({"wall_s": wall, "cpu_s": sum(c1[:4]) - sum(c0[:4]), "found": report.found,
                  "problems": len(report.problems), "verdicts": len(rows), "code": pipeline.__file__,
                  "digest": digest([r for r in rows if r[1] != "dedup.near_duplicate"]),
                  "dedup_digest": digest([r for r in rows if r[1] == "dedup.near_duplicate"])}))
"""

_TOOLS = ["jq", "awk", "sed", "tar", "sqlite3", "git", "curl", "find", "sort", "gzip"]
_SCRIPT = '''#!/usr/bin/env python3
"""Helper {i}: run {tool} over the inputs and write a report."""
import argparse
import json
import os
import subprocess
import sys
{extra_import}

def run(path):
    out = subprocess.run(["{tool}", path], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    {extra_line}
    report = {{p: len(run(p)) for p in args.paths}}
    json.dump(report, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
'''


def make_corpus(root: Path, n: int, seed: int = 0) -> None:
    """n packages shaped like real ones (see the module's docstring)."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(3000)]

    def words(k: int) -> str:
        return " ".join(rng.choices(vocab, k=k))

    for i in range(n):
        t = _TOOLS[i % len(_TOOLS)]
        d = root / f"gen-{i // 500}" / f"{t}-task-{i}"
        (d / "scripts").mkdir(parents=True)
        needs = i % 7 == 0   # now and then a credential or a remote call, in SKILL.md and the script
        body = "\n".join(f"- {words(rng.randint(6, 14))}" for _ in range(rng.randint(10, 40)))
        (d / "SKILL.md").write_text(
            f"---\nname: {t}-task-{i}\ndescription: Use {t} on dataset {i} to {words(10)}.\nlicense: MIT\n---\n"
            f"# {t} task {i}\n\n{words(40)}\n\n## Prerequisites\n- `{t}` installed (`apt-get install {t}`)\n"
            + (f"- Set `EXAMPLE_API_KEY` for the {words(2)} service\n" if needs else "")
            + f"\n## Inputs\n- `/data/set{i}/in.txt`\n\n## Outputs\n- `/data/set{i}/out.txt`\n\n## Steps\n"
            f"1. Inspect `/data/set{i}` with `ls -la`.\n2. Run `python scripts/run.py /data/set{i}/in.txt`.\n"
            f"3. Write the {i % 13} figures to `out.txt`.\n4. Check the line count with `wc -l /data/set{i}/out.txt`.\n\n"
            f"```bash\n{t} --version\npython scripts/run.py /data/set{i}/*.txt > /data/set{i}/out.txt\n```\n\n"
            f"## Notes\n{body}\n")
        (d / "scripts" / "run.py").write_text(_SCRIPT.format(
            i=i, tool=t, extra_import="import requests" if needs else "",
            extra_line='requests.get("https://api.example.com/v1/items", headers={"Authorization": '
                       'os.environ["EXAMPLE_API_KEY"]})' if needs else "pass"))
        if i % 3 == 0:
            (d / "references").mkdir()
            (d / "references" / "guide.md").write_text("\n".join(f"{words(12)}" for _ in range(300)))
            (d / "scripts" / "check.sh").write_text(f"#!/bin/sh\nset -e\n{t} \"$1\" | wc -l\n")
        if i % 10 == 0:
            (d / "assets").mkdir()
            (d / "assets" / "sample.bin").write_bytes(rng.randbytes(64 * 1024))
        if i % 50 == 0:
            (d / "data.csv").write_text("id,value\n" + "".join(f"{k},{k * 7 % 1000}\n" for k in range(150_000)))


def unpack_revision(rev: str, dest: Path) -> Path | None:
    """The code (pipeline/, workbench/) of revision `rev`, unpacked under dest; None when git or
    the revision is not there."""
    try:
        tar = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "pipeline", "workbench"],
                             capture_output=True, check=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
        tf.extractall(dest, filter="data")
    return dest


def one_ingest(code: Path, corpus: Path, ws_dir: Path, workers: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(code), str(ws_dir), str(corpus), str(workers)],
                          cwd=code, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"ingest with {code} failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"].startswith(str(code)), out["code"]   # the code we meant, not the installed one
    return out


def compare(label: str, corpus: Path, arms: dict[str, tuple[Path, int]], repeats: int, tmp: Path) -> dict:
    runs: dict[str, list[dict]] = {arm: [] for arm in arms}
    for r in range(repeats):
        for arm, (code, workers) in arms.items():
            out = one_ingest(code, corpus, tmp / f"ws-{label}-{arm}-{r}", workers)
            runs[arm].append(out)
            print(f"  {label} repeat {r + 1} {arm:>10}: {out['found']} packages in {out['wall_s']:6.1f} s "
                  f"({out['found'] / out['wall_s']:5.1f}/s), {out['cpu_s']:6.1f} CPU s, "
                  f"{out['verdicts']} verdicts, digests {out['digest']} / {out['dedup_digest']}", flush=True)
    rate = {arm: statistics.median(o["found"] / o["wall_s"] for o in rs) for arm, rs in runs.items()}
    digests = {o["digest"] for rs in runs.values() for o in rs}
    dedup_digests = {o["dedup_digest"] for rs in runs.values() for o in rs}
    found = runs["new"][0]["found"]
    result = {f"{label}_packages": found, f"{label}_new_per_s": rate["new"],
              f"{label}_new_serial_per_s": rate["new_serial"], f"{label}_verdicts_identical": int(len(digests) == 1),
              f"{label}_dedup_identical": int(len(dedup_digests) == 1)}
    line = (f"{label}: {found} packages, median of {repeats}: new {rate['new']:.1f}/s, "
            f"new in one process {rate['new_serial']:.1f}/s")
    if "old" in rate:
        result[f"{label}_old_per_s"] = rate["old"]
        result[f"{label}_ratio"] = rate["new"] / rate["old"]
        result[f"{label}_serial_ratio"] = rate["new_serial"] / rate["old"]
        line += (f", old {rate['old']:.1f}/s -> {rate['new'] / rate['old']:.2f}x "
                 f"({rate['new_serial'] / rate['old']:.2f}x in one process)")
    print(line + f"; per-skill verdicts identical across all runs: {'yes' if len(digests) == 1 else 'NO'}, "
          f"near-duplicate verdicts: {'yes' if len(dedup_digests) == 1 else 'no (commit timing, see above)'}",
          flush=True)
    return result


def store_write(tmp: Path, ws_dir: Path) -> tuple[float, float]:
    """(Arrow batch s, executemany s) for the rows of an ingested workspace."""
    rows = [(sid, 1, s) for sid, s, _ in skill_store.current_skills(Workspace.open(ws_dir).db)]
    fresh = Workspace.open(tmp / "ws-arrow")
    t0 = time.perf_counter()
    with fresh.db.write() as con:
        skill_store.insert_skills(con, rows, "bench", datetime.now())
    arrow_s = time.perf_counter() - t0
    base = Workspace.open(tmp / "ws-rows")
    cols = skill_store._COLUMNS
    t0 = time.perf_counter()
    with base.db.write() as con:
        con.executemany(
            f"INSERT INTO skills ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
            [[{**s.model_dump(), "id": sid, "version": 1, "is_current": True,
               "front_matter": json.dumps(s.front_matter), "ingest_run_id": "b",
               "ingested_at": datetime.now()}[c] for c in cols] for sid, _, s in rows])
    return arrow_s, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skills", type=int, default=2000, help="packages in the generated corpus (0: none)")
    ap.add_argument("--corpus", type=Path, help="a real corpus folder to measure besides (e.g. ../shared/corpora/dev)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--baseline", default=BASELINE, help="the git revision whose ingest is 'old'")
    ap.add_argument("--quick", action="store_true", help="smoke run: 200 generated packages, one repeat")
    args = ap.parse_args()
    if args.quick:
        args.skills, args.repeats = 200, 1   # above package_workers.POOL_MIN_PACKAGES: the pool's path
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; baseline {args.baseline[:12]}", flush=True)
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        old = unpack_revision(args.baseline, tmp / "old-code")
        if old is None:
            print(f"baseline {args.baseline} not available (no git or no such revision): new path only")
        arms = {**({"old": (old, 0)} if old else {}), "new": (REPO, 0), "new_serial": (REPO, 1)}
        corpora = []
        if args.skills:
            t0 = time.perf_counter()
            make_corpus(tmp / "generated", args.skills)
            print(f"generated {args.skills} packages in {time.perf_counter() - t0:.1f} s", flush=True)
            corpora.append(("generated", tmp / "generated"))
        if args.corpus:
            corpora.append(("corpus", args.corpus.resolve()))
        for label, corpus in corpora:
            results.update(compare(label, corpus, arms, args.repeats, tmp))
        if args.skills:
            arrow_s, rows_s = store_write(tmp, tmp / "ws-generated-new-0")
            print(f"store write of {args.skills} skills: arrow batch {arrow_s:.3f} s, executemany {rows_s:.3f} s")
            results["store_speedup_vs_executemany"] = rows_s / arrow_s
    print("RESULT " + " ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in results.items()))


if __name__ == "__main__":
    main()
