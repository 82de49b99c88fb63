"""Which documented commands of the tool a skill is about a task can run on a sample file, and the reason
for each class of command it cannot (no Docker)."""
from __future__ import annotations

import pytest

from pipeline.synth.exercise.command_plan import CommandPlan, purpose_of
from pipeline.synth.exercise.coverage import reason_class
from pipeline.synth.exercise.plan import ExercisePlan, exercise_plan

from .skills import TICKETS, package_of

SKILL = """---
name: {name}
description: {name} on local files.
---
# {name}

Each record looks like `{{"id": 4, "level": "error", "msg": "disk full", "host": "db1"}}`.

```bash
{line}
```
"""


def _plan(name: str, line: str):
    body = SKILL.format(name=name, line=line)
    return exercise_plan(f"id-{name}", name, "", body, (), None)


def test_a_documented_jq_command_is_filled_with_the_skills_own_example():
    body = (TICKETS / "SKILL.md").read_text()
    plan = exercise_plan("id", "ticket-fields", "Turn ticket exports into a TSV table with jq.", body, (),
                         package_of(TICKETS, "ticket-fields"))
    assert isinstance(plan, CommandPlan), plan
    # fenced commands come first, then inline ones (fidelity_rubric.documented_lines)
    rows, statuses = plan.options
    assert rows.tool == "jq" and rows.doc.line.startswith("jq -r '.data[] | [.id, .attributes.title")
    assert rows.call.output.text == "tickets.tsv" and rows.call.output.kind == "stdout"
    assert rows.purpose.startswith("List one row per ticket, with its id, title, points and owner")
    assert rows.sources[0].kind == "example" and b'"attributes"' in rows.sources[0].data
    assert statuses.doc.line == "jq -r '.data[].attributes.status' export.json | sort | uniq -c"
    assert [w.kind for w in statuses.call.words] == ["literal", "literal", "literal", "input", "pipe", "literal",
                                                      "pipe", "literal", "literal"]
    assert statuses.call.programs == ["jq", "sort", "uniq"] and statuses.call.output is None
    assert statuses.purpose == "Check which statuses occur"
    # the curl line is set-up on the network, never an option
    assert len(plan.options) == 2


def test_a_log_command_with_no_sample_in_the_skill_gets_a_generated_log_its_pattern_matches():
    got = _plan("grep-errors", "grep -c ERROR app.log")
    assert isinstance(got, CommandPlan), got
    assert got.first.sources[0].kind == "generated" and got.first.sources[0].ref == "app-log"


def test_a_table_command_gets_a_generated_table_with_the_field_it_reads():
    got = _plan("awk-totals", "awk -F, 'NR > 1 { s[$3] += $5 } END { for (k in s) print k, s[k] }' orders.csv")
    assert isinstance(got, CommandPlan), got
    assert got.first.sources[0].kind == "generated"


@pytest.mark.parametrize("name,line,reason,cls", [
    ("jq-fetch", "curl -s http://localhost/api | jq '.id' > ids.txt",
     "talks to the network (curl)", "command: talks to the network"),
    ("git-history", "git log --oneline -20 -- app.py",
     "runs git on the machine's own state (a repository)", "command: works on machine state (repository, files, processes)"),
    ("shuf-sample", "shuf -n 5 names.txt", "shuf draws random values", "command: random or clock"),
    ("openssl-keys", "openssl genrsa -out key.pem 2048", "openssl genrsa needs keys or draws random values",
     "command: a program no sample can feed"),
    ("jq-vars", 'jq -r ".id" "$INPUT"', "uses shell variables", "command: shell variables, heredocs, background"),
    ("jq-slots", "jq '.id' <file>", "the argument <file> is a placeholder", "command: placeholder a task cannot fill"),
    ("grep-syslog", "grep -i error /var/log/syslog", "a folder or a path on the author's machine",
     "command: a folder or path of the author's machine"),
    ("sed-db", "sed -n 1p prod.db", "prod.db is a file of a type a task cannot make", "command: a file type no sample can stand for"),
    ("jq-calc", "jq -n '1 + 2'", "reads no input file", "command: reads no input file"),
    ("jq-missing", "jq -r '.owner.login' records.json", "has no key owner the jq filter reads",
     "command: no sample fits the command"),
    ("sed-inplace", "sed -i 's/a/b/' notes.txt", "sed edits its input in place",
     "command: edits in place or writes unnamed files"),
    ("zstd-pack", "zstd -19 app.log", "writes its result beside its input",
     "command: edits in place or writes unnamed files"),
    ("diff-heredoc", "diff a.txt - <<EOF", "heredoc", "command: shell variables, heredocs, background"),
    ("bc-calc", "bc -l sums.txt", "runs bc, which no sample file can feed", "command: a program no sample can feed"),
    ("awk-file", "awk -f scripts/sum.awk data.csv", "awk reads its program from a file",
     "command: program read from a file"),
    ("jq-check", "jq -e . events.json > /dev/null", "discards what it prints",
     "command: discards its output (exit status only)"),
    # sort's -n is not jq's --null-input: the filter's keys are still checked
    ("jq-sorted", "jq -c 'select(.latency > 1)' records.json | sort -n", "has no key latency the jq filter reads",
     "command: no sample fits the command"),
    ("awk-window", "awk '\n/^20/ { n++ }\nEND { print n }' app.log", "goes on over several lines",
     "command: not a command line"),
])
def test_each_class_of_command_a_task_cannot_run_is_refused_with_its_reason(name, line, reason, cls):
    got = _plan(name, line)
    assert isinstance(got, str), got
    assert got.startswith("documents commands of ") and "none runs on a sample file" in got, got
    assert reason in got, got
    assert reason_class(got) == cls


def test_a_tool_the_image_lacks_is_named():
    got = _plan("yq-merge", "yq eval '.a' config.yaml")
    assert got == "documents commands of yq; yq not in the base image"
    assert reason_class(got) == "commands of a tool the image lacks"


def test_a_skill_with_a_runnable_script_stays_a_script_exercise():
    from .skills import FUNNEL
    body = (FUNNEL / "SKILL.md").read_text()
    assert isinstance(exercise_plan("id", "funnel-report", "", body, (), package_of(FUNNEL, "funnel-report")),
                      ExercisePlan)


def test_the_purpose_is_the_skills_own_words_next_to_the_command():
    body = "# T\n\n## Count\n1. Count error lines per host:\n   ```bash\n   grep -c x a.log\n   ```\n" \
           "2. Sorted unique hosts: `cut -d' ' -f2 a.log | sort -u`\n```bash\nwc -l a.log  # Lines in the log\n```\n"
    assert purpose_of(body, "grep -c x a.log") == "Count error lines per host"
    assert purpose_of(body, "cut -d' ' -f2 a.log | sort -u") == "Sorted unique hosts"
    assert purpose_of(body, "wc -l a.log  # Lines in the log") == "Lines in the log"


def test_a_file_of_a_known_type_at_the_authors_path_is_an_input_the_task_supplies():
    got = _plan("awk-status", "awk '{c[$9]++} END {for (s in c) print s, c[s]}' /var/log/nginx/access.log | sort")
    assert isinstance(got, CommandPlan), got
    slot = got.first.call.inputs[0]
    assert slot.text == "/var/log/nginx/access.log" and got.first.sources[0].ref == "access-log"


SQLITE = """---
name: sqlite-{name}
description: Query a local SQLite database with the sqlite3 shell.
---
# sqlite {name}

Create the tables once:

```bash
sqlite3 shop.db <<'SQL'
CREATE TABLE IF NOT EXISTS orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL, status TEXT,
                                  total REAL, placed_at TEXT);
SQL
```

{what}:

```bash
{line}
```
"""


def _sqlite(name: str, line: str, what: str = "Totals by status"):
    body = SQLITE.format(name=name, line=line, what=what)
    return exercise_plan(f"id-{name}", f"sqlite-{name}", "Query a local SQLite database with the sqlite3 shell.",
                         body, (), None)


def test_a_documented_query_runs_on_a_database_of_the_skills_own_schema():
    from pipeline.synth.exercise.command_inputs import realize
    from pipeline.synth.exercise.command_sqlite import sql_misfit
    import random
    import sqlite3
    got = _sqlite("totals", "sqlite3 -header -csv shop.db \"SELECT status, count(*), round(sum(total), 2) FROM "
                  "orders WHERE status = 'open' GROUP BY status;\"")
    assert isinstance(got, CommandPlan), got
    opt = got.first
    assert [w.kind for w in opt.call.words][:4] == ["literal", "literal", "literal", "input"]
    assert opt.sources[0].kind == "schema" and opt.purpose == "Totals by status"
    db = realize(random.Random(1), opt.sources[0], opt.call, opt.call.inputs[0])
    con = sqlite3.connect(":memory:")
    con.deserialize(db)
    statuses = [r[0] for r in con.execute("SELECT status FROM orders")]
    assert "open" in statuses and len(statuses) >= 12          # the literal the query compares with is drawn
    assert sql_misfit(db, "SELECT nope FROM orders") .startswith("does not have what the SQL reads")


@pytest.mark.parametrize("line,reason", [
    ("sqlite3 shop.db \"DELETE FROM orders WHERE status = 'open';\"", "changes the database or its settings (DELETE)"),
    ("sqlite3 shop.db \"PRAGMA integrity_check;\"", "reads a setting, not the data (PRAGMA"),
    ("sqlite3 shop.db \".backup shop-copy.db\"", "runs the sqlite3 shell command .backup"),
    ("sqlite3 shop.db < fix.sql", "runs the SQL it reads from its input"),
    ("sqlite3 shop.db \"SELECT * FROM customers;\"", "no such table: customers"),
])
def test_sqlite_commands_a_task_cannot_run_are_refused(line, reason):
    got = _sqlite("refused", line)
    assert isinstance(got, str) and reason in got, got
