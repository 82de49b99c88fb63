"""Near-duplicate detection: reworded copies are set aside, distinct skills are kept."""
from __future__ import annotations

import textwrap

from pipeline.filters import near_duplicate as nd
from pipeline.filters import runner
from pipeline.ingest.skill_builder import build_skill
from workbench.models import Outcome

BISECT = """
Find the commit that introduced a regression with git bisect. Start from a clean working
tree and make sure the test that shows the bug can run from the command line without any
manual input. Mark the current commit as bad and the last release tag as good, then let
git check out the commit in the middle of the range. Run the test script on each commit
that git proposes and mark the commit good or bad according to the exit status. When the
test cannot run because the build is broken, skip the commit instead of guessing. Once git
prints the first bad commit, record its hash, its author and its subject line in the
report, then reset the repository to the branch you started from so that nothing is left
in a detached head state. Attach the output of git bisect log to the report so that the
search can be replayed later by somebody else.
"""

# The same skill, lightly reworded: a few words changed, nothing added.
BISECT_REWORDED = BISECT.replace("introduced a regression", "caused a regression") \
    .replace("the last release tag", "the previous release tag") \
    .replace("record its hash", "write down its hash") \
    .replace("somebody else", "another person")

BISECT_REWORDED_2 = BISECT.replace("Start from a clean working", "Begin from a clean working") \
    .replace("according to the exit status", "depending on the exit status") \
    .replace("Attach the output", "Include the output")

SQLITE_BACKUP = """
Back up a SQLite database while the application keeps writing to it. Open the database
with the sqlite3 shell and use the online backup command so that readers and writers are
not blocked for long. Write the copy to a file whose name carries the current date, then
run an integrity check on the copy and refuse to keep it when the check reports anything
other than ok. Compress the copy with gzip, compute its sha256 checksum and store both
next to each other in the backup folder. Delete copies older than fourteen days, but
always keep the newest three, even when they are older. Finally print a short summary
with the size of the database, the size of the compressed copy and the time the backup
took, so that a cron job can mail it to the operator.
"""

LOG_REPORT = """
Summarise an nginx access log into a table of status codes per hour. Parse each line with
awk, take the timestamp and the status field, and round the timestamp down to the hour.
Count requests per hour and status, sort the result by hour and write it as CSV with a
header row. Flag every hour where the share of 5xx responses is above two percent and
list the ten paths that produced most of those errors in that hour. Keep the script
working on rotated and gzip compressed logs by reading them through zcat when the file
name ends in gz.
"""


def item(sid: str, text: str, order: tuple) -> nd.DedupItem:
    return nd.DedupItem(skill_id=sid, label=f"'{sid}' ({sid}-key)", text=text, order=order)


def test_reworded_copy_is_similar_enough():
    assert nd.jaccard(nd.shingles(BISECT), nd.shingles(BISECT_REWORDED)) >= nd.THRESHOLD
    assert nd.jaccard(nd.shingles(BISECT), nd.shingles(SQLITE_BACKUP)) < 0.1


def test_reworded_copy_fails_against_the_older_one():
    # The newer item comes first in the list: the order tuple, not list position, decides.
    items = [item("newer", BISECT_REWORDED, (2,)), item("older", BISECT, (1,)),
             item("sqlite", SQLITE_BACKUP, (3,))]
    res = nd.find_near_duplicates(items)

    assert set(res) == {"newer", "older", "sqlite"}
    dup = res["newer"]
    assert dup.rule == nd.RULE == "dedup.near_duplicate"
    assert dup.outcome == Outcome.FAIL
    assert "near-duplicate of 'older' (older-key), ingested earlier" in dup.evidence
    assert "of word 3-grams shared" in dup.evidence
    assert dup.location == "older"

    keeper = res["older"]
    assert keeper.outcome == Outcome.PASS
    assert keeper.evidence == "kept; near-duplicates set aside: 'newer' (newer-key)"

    assert res["sqlite"].outcome == Outcome.PASS
    assert res["sqlite"].evidence.startswith("no other skill shares")


def test_order_tuple_decides_who_is_kept():
    items = [item("a", BISECT, ("2026-01-02", "a")), item("b", BISECT_REWORDED, ("2026-01-01", "b"))]
    res = nd.find_near_duplicates(items)
    assert res["b"].outcome == Outcome.PASS
    assert res["a"].outcome == Outcome.FAIL
    assert res["a"].location == "b"


def test_distinct_skills_all_pass():
    items = [item("bisect", BISECT, (1,)), item("sqlite", SQLITE_BACKUP, (2,)),
             item("logs", LOG_REPORT, (3,))]
    res = nd.find_near_duplicates(items)
    for sid in ("bisect", "sqlite", "logs"):
        assert res[sid].outcome == Outcome.PASS
        assert res[sid].evidence.startswith("no other skill shares")


def test_distinct_skills_sharing_a_template_pass():
    template = textwrap.dedent("""
        ## Safety
        Work on a copy of the data. Ask before deleting anything.
        ## Output
        A short report in the terminal.
    """)
    items = [item("bisect", BISECT + template, (1,)), item("sqlite", SQLITE_BACKUP + template, (2,))]
    res = nd.find_near_duplicates(items)
    assert res["bisect"].outcome == Outcome.PASS
    assert res["sqlite"].outcome == Outcome.PASS


def test_group_of_three_copies_keeps_exactly_one():
    items = [item("c2", BISECT_REWORDED, (2,)), item("c3", BISECT_REWORDED_2, (3,)),
             item("c1", BISECT, (1,)), item("logs", LOG_REPORT, (4,))]
    res = nd.find_near_duplicates(items)
    copies = {sid: res[sid] for sid in ("c1", "c2", "c3")}
    kept = [sid for sid, r in copies.items() if r.outcome == Outcome.PASS]
    assert kept == ["c1"]
    assert "'c2' (c2-key)" in copies["c1"].evidence and "'c3' (c3-key)" in copies["c1"].evidence
    for sid in ("c2", "c3"):
        assert copies[sid].outcome == Outcome.FAIL
        assert copies[sid].location == "c1"
        assert "near-duplicate of 'c1' (c1-key)" in copies[sid].evidence
    assert res["logs"].outcome == Outcome.PASS


def test_empty_and_tiny_texts_are_not_duplicates_of_each_other():
    items = [item("e1", "", (1,)), item("e2", "", (2,)), item("t1", "ok", (3,))]
    res = nd.find_near_duplicates(items)
    assert all(r.outcome == Outcome.PASS for r in res.values())


def _parsed(name: str, body: str):
    text = (f"---\nname: {name}\ndescription: Find the commit that introduced a regression.\n---\n"
            f"# {name}\n\n## Steps\n1. Run `git bisect start HEAD v1.0`.\n"
            f"2. Run `git bisect run ./test.sh`.\n\n{body}")
    return build_skill(text, where=f"{name}/SKILL.md", skill_key=name, source_kind="folder",
                       source_path=name, source_ref=None, package_files=["SKILL.md"],
                       content_hash="x" * 64)


def test_runner_check_duplicates_flags_renamed_copy():
    skills = [("id-copy", _parsed("bisect-helper-copy", BISECT_REWORDED), ("2026-02-01", "id-copy")),
              ("id-orig", _parsed("bisect-helper", BISECT), ("2026-01-01", "id-orig")),
              ("id-sql", _parsed("sqlite-backup", SQLITE_BACKUP), ("2026-03-01", "id-sql"))]
    verdicts = {v.skill_id: v for v in runner.check_duplicates(skills)}
    assert verdicts["id-copy"].outcome == Outcome.FAIL
    assert verdicts["id-copy"].rule == "dedup.near_duplicate"
    assert "'bisect-helper' (bisect-helper)" in verdicts["id-copy"].evidence
    assert verdicts["id-copy"].location == "id-orig"
    assert verdicts["id-orig"].outcome == Outcome.PASS
    assert verdicts["id-sql"].outcome == Outcome.PASS
