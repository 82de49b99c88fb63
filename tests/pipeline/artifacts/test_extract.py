"""Artifact extraction on SKILL.md bodies shaped like real public skills (texts written here)."""
from __future__ import annotations

import time

import pytest

from pipeline.artifacts.extract import ArtifactRef, SkillArtifacts, extract

JQ_REFERENCE = """---
name: jq-cheatsheet
description: Query and reshape JSON on the command line with jq.
---
# jq reference

## Common filters

| Filter | Meaning |
|--------|---------|
| `.foo` | field |

```bash
jq '.items[] | {id, name}' inventory.json
jq -r '.users[].email' users.json > emails.txt
curl -s http://127.0.0.1:8080/api/items | jq length
```

Use `jq -s` to slurp a stream of records from events.jsonl.
"""

FFMPEG_TRANSCODER = """---
name: video-transcode
description: Transcode videos to web formats.
metadata: {"openclaw": {"requires": {"bins": ["ffmpeg"]}}}
---
# Transcode for the web

1. Inspect the source: `ffprobe -v error -show_streams input.mov`
2. Transcode:

```sh
ffmpeg -i input.mov -c:v libvpx-vp9 -b:v 1M -c:a libopus output.webm
ffmpeg -i input.mov -vf "thumbnail,scale=320:-1" -frames:v 1 poster.png
```

The result is `output.webm` plus a poster frame.
"""

PG_DUMP_BACKUP = """---
name: pg-backup
description: Nightly PostgreSQL backups with pg_dump.
---
# Back up a PostgreSQL database

Make sure the server answers: `pg_isready -h localhost`.

```bash
pg_dump -h localhost -U app -Fc appdb -f /backups/appdb.dump
pg_dump -h localhost -U app --schema-only appdb > schema.sql
sha256sum schema.sql > SHA256SUMS
```
"""

GIT_BISECT = """# Find the commit that broke the build

```bash
git bisect start
git bisect bad HEAD
git bisect good v1.4.0
git bisect run ./run-tests.sh
git bisect reset
```

Write the offending commit hash to `culprit.txt`.
"""

TAR_ZSTD = """---
name: recompress-archives
description: Recompress gzip tarballs with zstd for faster decompression.
---
# Recompress tar.gz to tar.zst

```bash
for f in *.tar.gz; do
  gunzip -c "$f" | zstd -19 -o "${f%.gz}.zst"
done
tar -xzf release.tar.gz -C out/
zstd -19 -o release.tar.zst release.tar
```
"""

CURL_LOCALHOST = """# Smoke-test the local API

Start the dev server first, then check it answers on http://localhost:8000.

```bash
curl -fsS http://localhost:8000/health
curl -s -o response.json -w '%{http_code}' http://localhost:8000/api/v1/items
```
"""

PYTEST_SKILL = """---
name: python-testing
description: Write and run pytest suites for Python packages.
---
# Python testing

## Inputs
- a Python package with `pyproject.toml`

```bash
pip install -e .[test]
pytest -q tests/ --junitxml=report.xml
```

Keep fixtures in `tests/conftest.py`.
"""

PROSE_ONLY = """---
name: brainstorm-partner
description: Help the user brainstorm ideas and refine them into a plan.
---
# Brainstorming partner

Ask open questions, one at a time. Mirror back what you heard. Offer three options and
let the user pick. See [the examples](references/examples.md) for tone and the guide in
examples.md for phrasing.
"""


def _kinds(refs: tuple[ArtifactRef, ...]) -> set[str]:
    return {r.kind for r in refs}


def _names(refs: tuple[ArtifactRef, ...]) -> set[str | None]:
    return {r.name for r in refs}


def test_jq_reference_reads_json_and_writes_text():
    a = extract(JQ_REFERENCE)
    assert a.tools[:2] == ("jq", "curl")
    assert {"inventory.json", "users.json", "events.jsonl"} <= _names(a.consumes)
    assert {"json-document", "jsonl-records", "http-service"} <= _kinds(a.consumes)
    assert "emails.txt" in _names(a.produces) and "emails.txt" not in _names(a.consumes)


def test_ffmpeg_transcoder_reads_the_input_and_writes_the_last_file():
    a = extract(FFMPEG_TRANSCODER, bins=["ffmpeg"])
    assert {"ffprobe", "ffmpeg"} <= set(a.tools)
    assert a.consumes[0].kind == "video-file" and a.consumes[0].name == "input.mov"
    assert {"output.webm", "poster.png"} <= _names(a.produces)
    assert "output.webm" not in _names(a.consumes)
    ref = next(r for r in a.produces if r.name == "output.webm")
    assert ref.line is not None and FFMPEG_TRANSCODER.splitlines()[ref.line - 1].strip() == ref.evidence


def test_pg_dump_needs_a_database_and_leaves_a_dump():
    a = extract(PG_DUMP_BACKUP)
    assert a.consumed_kinds[0] == "postgres-database"
    assert {"sql-dump", "checksum-manifest"} <= _kinds(a.produces)
    assert "schema.sql" in _names(a.produces)
    # schema.sql is written before sha256sum reads it: an intermediate, not an input
    assert "schema.sql" not in _names(a.consumes)
    assert set(a.tools) >= {"pg_isready", "pg_dump", "sha256sum"}


def test_git_bisect_needs_history_and_writes_the_answer():
    a = extract(GIT_BISECT)
    assert a.tools == ("git",)
    assert "git-history" in a.consumed_kinds
    assert "culprit.txt" in _names(a.produces)


def test_tar_zstd_recompression():
    a = extract(TAR_ZSTD)
    assert {"gunzip", "zstd", "tar"} <= set(a.tools)
    assert "tar-archive" in a.consumed_kinds and "release.tar.gz" in _names(a.consumes)
    assert "release.tar.zst" in _names(a.produces)
    assert "directory-tree" in a.produced_kinds  # tar -x leaves the unpacked tree


def test_curl_against_localhost():
    a = extract(CURL_LOCALHOST)
    assert a.tools == ("curl",)
    assert a.consumed_kinds[0] == "http-service"
    assert "response.json" in _names(a.produces) and "http-response" in a.produced_kinds


def test_python_pytest_skill():
    a = extract(PYTEST_SKILL, inputs=["a Python package with `pyproject.toml`"])
    assert {"pip", "pytest"} <= set(a.tools)
    assert {"test-suite", "dependency-manifest"} <= set(a.consumed_kinds)
    assert next(r for r in a.consumes if r.kind == "test-suite").name == "Python"
    assert "report.xml" in _names(a.produces)


def test_prose_only_skill_has_nothing():
    a = extract(PROSE_ONLY)
    assert a == SkillArtifacts((), (), ()) and a.empty


def test_urls_and_package_files_are_not_artifacts():
    text = ("Read https://example.com/docs/setup.html and run `python3 scripts/convert.py data.csv`.\n"
            "See ../other-skill/SKILL.md and references/api.md.\n")
    a = extract(text)
    assert _names(a.consumes) == {"data.csv"} and not a.produces


def test_front_matter_is_not_read_as_body():
    a = extract("---\nname: x\ndescription: converts notes.txt\n---\n# X\n")
    assert a.empty


def test_unknown_commands_in_a_shell_block_are_tools_but_not_in_plain_text_blocks():
    a = extract("```bash\nhttpyac send api.http\n```\n```text\nOutput: all good\n```\n")
    assert a.tools == ("httpyac",)


@pytest.mark.parametrize("body", [JQ_REFERENCE, FFMPEG_TRANSCODER, PG_DUMP_BACKUP, GIT_BISECT, TAR_ZSTD,
                                  CURL_LOCALHOST, PYTEST_SKILL, PROSE_ONLY])
def test_extract_is_pure(body):
    assert extract(body) == extract(body)


def test_extract_is_fast():
    bodies = [JQ_REFERENCE, FFMPEG_TRANSCODER, PG_DUMP_BACKUP, GIT_BISECT, TAR_ZSTD, CURL_LOCALHOST,
              PYTEST_SKILL, PROSE_ONLY] * 150          # 1,200 skills, like the dev corpus
    started = time.process_time()   # CPU time: the machine is shared, wall time says more about the others
    for body in bodies:
        extract(body)
    assert time.process_time() - started < 1.0


def test_extract_on_the_dev_corpus_is_fast_and_finds_evidence(dev_corpus):
    texts = [p.read_text(errors="replace") for p in sorted(dev_corpus.rglob("SKILL.md"))]
    started = time.process_time()
    found = [extract(t) for t in texts]
    elapsed = time.process_time() - started
    assert elapsed < 1.5 * max(1, len(texts) / 1200), f"{len(texts)} skills took {elapsed:.2f}s"
    with_artifacts = sum(not a.empty for a in found) / len(found)
    assert with_artifacts >= 0.5, f"only {with_artifacts:.0%} of real skills have any artifact"


@pytest.mark.parametrize("hostile", [
    "a.b~" * 250_000,                                   # one megabyte of dotted names, no space
    "[" * 1_000_000,                                    # links that never close
    "`" + "x" * 1_000_000,                              # a code span that never closes
    "Write " + "out.csv, " * 100_000,                   # a hundred thousand mentions on one line
    "```bash\n" + "cat a.txt | " * 80_000 + "\n```\n",  # one enormous pipeline
])
def test_hostile_bodies_stay_fast(hostile):
    started = time.process_time()
    extract(hostile)
    assert time.process_time() - started < 3.0
