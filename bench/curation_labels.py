"""Curation scored on hand labels of a real corpus, the old and the new labels apart.

Reads each labelled package (SKILL.md and its bundled files) the way ingest does, runs every
per-skill rule, and scores the verdicts with analysis.curation_eval: precision and recall of
"accepted", reason right among correct rejections, the confusion table and — per verdict
confidence — the reliability table. No workspace is written; the near-duplicate rule (which
needs the whole corpus) is not run, so no skill is rejected `duplicate` here.

    python bench/curation_labels.py [--corpus DIR] [--split 80] [--quick] [--json]

`--split N`: labels 1..N are reported as "old", the rest as "new" (LABELLING.md of the dev
corpus: lines 1-80 were the first labels, 81-200 made later with its brief).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.curation_eval import confusion_lines, reliability_lines, score  # noqa: E402
from pipeline.filters import runner  # noqa: E402
from pipeline.filters.confidence import skill_confidence  # noqa: E402
from pipeline.filters.reasons import primary_reason  # noqa: E402
from pipeline.ingest import packages  # noqa: E402
from pipeline.ingest.skill_builder import build_skill  # noqa: E402
from workbench.models import Outcome  # noqa: E402


def _row(folder: Path) -> dict | None:
    refs, _ = packages.discover([folder])
    ref = next((r for r in refs if isinstance(r, packages.FolderPackage) and Path(r.folder) == folder), None)
    if ref is None:
        return None
    try:
        text, files, digest = packages.read_folder(ref)
        skill = build_skill(text, where=f"{folder}/SKILL.md", skill_key=ref.key, source_kind="folder",
                            source_path=str(folder), source_ref=ref.source_ref, package_files=files,
                            content_hash=digest)
    except Exception:  # noqa: BLE001 - an unreadable package is scored "missing", as ingest reports it
        return None
    verdicts = runner.check_skill("x", skill)
    outcomes = {str(v.outcome) for v in verdicts}
    status = "rejected" if Outcome.FAIL in outcomes else "pending" if Outcome.WARN in outcomes else "accepted"
    return {"source_path": str(folder), "status": status,
            "reason": primary_reason(verdicts) if status != "accepted" else None,
            "confidence": skill_confidence(verdicts),
            "rules": [(v.rule, str(v.outcome), v.evidence[:160]) for v in verdicts if str(v.outcome) != "pass"]}


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def summary(name: str, s) -> str:
    return (f"{name:>4}: {s.labelled} labels, precision {_fmt(s.accepted_precision)} "
            f"({s.true_accepts} right, {s.false_accepts} wrong), recall {_fmt(s.accepted_recall)} "
            f"({s.missed_accepts} missed), reason right {_fmt(s.reason_right)} "
            f"({s.reason_right_count}/{s.correct_rejections})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared/corpora/dev")
    ap.add_argument("--split", type=int, default=80)
    ap.add_argument("--quick", action="store_true", help="the first 20 labels of each subset only")
    ap.add_argument("--json", action="store_true", help="also print one JSON row per label")
    ap.add_argument("--verbose", action="store_true", help="list the disagreements with their fired rules")
    args = ap.parse_args()
    lab_file = args.corpus / "labels.jsonl"
    if not lab_file.is_file():
        print(f"no labels file at {lab_file}; pass --corpus DIR", file=sys.stderr)
        return 2
    labels = [json.loads(ln) for ln in lab_file.read_text().splitlines() if ln.strip()]
    old, new = labels[:args.split], labels[args.split:]
    if args.quick:
        old, new = old[:20], new[:20]
    t0 = time.perf_counter()
    rows = [r for lab in old + new if (r := _row(args.corpus / lab["path"])) is not None]
    elapsed = time.perf_counter() - t0
    by_path = {r["source_path"]: r for r in rows}
    res = {}
    for name, subset in (("old", old), ("new", new), ("all", old + new)):
        res[name] = s = score(rows, subset)
        print(summary(name, s))
    s = res["all"]
    print("\nconfusion (all):", *confusion_lines(s.confusion), sep="\n")
    print("\nreliability (all): precision of accepted / reason right by confidence band",
          *reliability_lines(rows, old + new), sep="\n")
    if args.verbose:
        for lab in old + new:
            r = by_path.get(str(args.corpus / lab["path"]))
            got = "missing" if r is None else r["reason"] if r["status"] == "rejected" else r["status"]
            want = "accepted" if lab["label"] == "accept" else lab["reason"]
            if got != want:
                print(f"\n{want} -> {got}: {lab['path']}\n   label note: {lab.get('note')}")
                for rule in (r or {}).get("rules", []):
                    print(f"   {rule[0]} {rule[1]}: {rule[2]}")
    if args.json:
        for r in rows:
            print(json.dumps(r))
    print(f"\nRESULT precision_all={_fmt(s.accepted_precision)} recall_all={_fmt(s.accepted_recall)} "
          f"reason_all={_fmt(s.reason_right)} precision_new={_fmt(res['new'].accepted_precision)} "
          f"recall_new={_fmt(res['new'].accepted_recall)} reason_new={_fmt(res['new'].reason_right)} "
          f"seconds={elapsed:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
