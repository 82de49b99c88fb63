"""Issue 12 (U): one shell parser for the workflow rules, the artifact extractor and solve.sh.

Over every SKILL.md of the dev corpus (or 1,200 generated bodies where it is absent) it times
the two readers of the parser (`shell_commands`, what workflow.py reads, and `extract`), and
the splitting alone: `pipeline.shell_syntax.simple_commands` on every shell line next to, as
the baseline in the same run, `shlex` (what the workflow parser split with before: 2.1-2.5 s
for the corpus, against 0.5-0.6 s for the artifact extractor). CPU seconds, best of 3.

    .venv/bin/python bench/shell_parse.py [--corpus DIR] [--quick]
"""
from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.artifacts.extract import _SHELL_LANGS, _body_start, extract  # noqa: E402
from pipeline.ingest.shell_commands import shell_commands  # noqa: E402
from pipeline.shell_syntax import markdown_lines, simple_commands  # noqa: E402

_BODY = """---
name: tool-{i}
description: Work with {fmt} files.
---
# Steps
1. Convert `data{i}.{fmt}` with `jq -r '.a' data{i}.{fmt}`.
2. Archive the results.

```bash
jq -c '.[] | select(.ok)' data{i}.{fmt} | gzip > out{i}.json.gz 2>&1
tar -czf "b-$(date +%F).tgz" out/ && echo done \\
  --quiet
```
""" + "Prose about the workflow, nothing to run here.\n" * 30


def _shlex(line: str) -> list[str]:
    try:
        lex = shlex.shlex(line, posix=True, punctuation_chars="|&;<>")
        lex.whitespace_split = True
        lex.commenters = ""
        return list(lex)
    except ValueError:
        return line.split()


def _best(fn, items, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        for x in items:
            fn(x)
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared/corpora/dev")
    ap.add_argument("--quick", action="store_true", help="smoke run: the first 100 skills, one repeat")
    args = ap.parse_args()
    paths = sorted(args.corpus.rglob("SKILL.md")) if args.corpus.is_dir() else []
    paths = paths[:100] if args.quick else paths
    texts = [p.read_text(errors="replace") for p in paths] or [_BODY.format(i=i, fmt="json")
                                                               for i in range(100 if args.quick else 1200)]
    repeats = 1 if args.quick else 3
    lines = []
    for t in texts:
        rows = t.splitlines()
        lines += [x for _, x, lang in markdown_lines(rows, _body_start(rows), _SHELL_LANGS) if lang in _SHELL_LANGS]
    split_s = _best(simple_commands, lines, repeats)
    shlex_s = _best(_shlex, lines, repeats)
    workflow_s = _best(shell_commands, texts, repeats)
    extract_s = _best(extract, texts, repeats)
    print(f"{len(texts)} skills, {len(lines)} shell lines: split {split_s:.3f} s CPU, shlex baseline {shlex_s:.3f} s; "
          f"shell_commands {workflow_s:.3f} s, extract {extract_s:.3f} s")
    print(f"RESULT skills={len(texts)} lines={len(lines)} split_cpu_s={split_s:.3f} shlex_cpu_s={shlex_s:.3f} "
          f"speedup_vs_shlex={shlex_s / split_s:.2f} shell_commands_cpu_s={workflow_s:.3f} "
          f"extract_cpu_s={extract_s:.3f}")


if __name__ == "__main__":
    main()
