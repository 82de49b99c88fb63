"""The real container state through a Session (real Docker): tree, heads, CSV/TSV/JSON/SQLite
schemas, tool versions, the diff a solution leaves, and the same schemas read on the host
when the image has no python3."""
import sqlite3
import time
from contextlib import contextmanager

import pytest

from pipeline.synth.llm.state import (HEAD_LINES, MAX_HEADS, ContainerState, diff_states, read_state)
from workbench.sandbox.base_image import base_image_name
from workbench.sandbox.engine import Limits
from workbench.sandbox.session import TreeEntry

docker = pytest.mark.docker


@contextmanager
def _session_after(engine, script: str):
    """A session on the base image in which `script` has run (and succeeded)."""
    with engine.session(base_image_name(), Limits()) as s:
        res = s.exec(script, 60)
        assert res.ok, res
        yield s


def _sqlite_bytes(tmp_path) -> bytes:
    db = tmp_path / "shop.db"
    con = sqlite3.connect(db)
    con.execute("create table orders (id integer primary key, customer text, total real)")
    con.executemany("insert into orders (customer, total) values (?, ?)", [("ann", 3.5), ("bob", 1.0), ("cy", 2)])
    con.execute("create view big as select * from orders where total > 2")
    con.commit()
    con.close()
    return db.read_bytes()


def _fixture_files(tmp_path) -> dict[str, bytes]:
    db = _sqlite_bytes(tmp_path)
    return {
        "/app/data/sales.csv": b'region,amount,note\neu,3,"two\nlines"\nus,4,x\n',
        "/app/data/people.tsv": b"name\tage\nann\t31\n",
        "/app/config.json": b'{"name": "demo", "retries": 3, "tags": ["a"], "db": {"path": "/app/shop.db"}, "x": null}',
        "/app/events.jsonl": b'{"ts": 1, "kind": "start"}\n{"ts": 2, "kind": "stop"}\n',
        "/app/shop.db": db,
        "/app/cache.bin": db,                         # SQLite by its magic, whatever the name
        "/app/logo.dat": b"\x00\x01\x02binary",
        "/app/README.md": "".join(f"line {i}\n" for i in range(50)).encode(),
    }


@docker
def test_state_reads_tree_heads_schemas_and_tools(engine, tmp_path):
    timer = {}
    with engine.session(base_image_name(), Limits()) as s:
        s.write_files(_fixture_files(tmp_path))
        state = read_state(s, tools=("jq", "sqlite3", "python3", "tmux", "no-such-tool", "rm -rf /"), timer=timer)
    assert timer["docker_s"] > 0
    assert {"/app/data", "/app/data/sales.csv", "/app/shop.db", "/app/README.md"} <= set(state.files)
    assert not state.truncated and state.exists("/app/data") and not state.exists("/app/nope")

    assert state.heads["/app/README.md"].splitlines() == [f"line {i}" for i in range(HEAD_LINES)]
    assert state.heads["/app/data/sales.csv"].startswith("region,amount,note")
    assert "/app/logo.dat" in state.binary and "/app/logo.dat" not in state.heads
    assert "/app/shop.db" not in state.heads and "/app/cache.bin" not in state.heads

    sc = state.schemas
    assert (sc["/app/data/sales.csv"].columns, sc["/app/data/sales.csv"].rows) == (["region", "amount", "note"], 2)
    assert (sc["/app/data/people.tsv"].format, sc["/app/data/people.tsv"].columns) == ("tsv", ["name", "age"])
    assert sc["/app/config.json"].keys == {"name": "string", "retries": "integer", "tags": "array",
                                           "db": "object", "x": "null"}
    assert (sc["/app/events.jsonl"].rows, sc["/app/events.jsonl"].keys) == (2, {"ts": "integer", "kind": "string"})
    for db in ("/app/shop.db", "/app/cache.bin"):
        assert sc[db].format == "sqlite"
        assert sc[db].tables["orders"] == {"columns": ["id INTEGER", "customer TEXT", "total REAL"], "rows": 3}
        assert sc[db].tables["big"]["rows"] is None

    assert state.tools["jq"].startswith("jq-1.") and state.tools["tmux"].startswith("tmux ")   # tmux knows -V only
    assert state.tools["python3"].startswith("Python 3.")
    assert state.tools["no-such-tool"] is None and state.tools["rm -rf /"] is None
    assert list(state.tools) == ["jq", "sqlite3", "python3", "tmux", "no-such-tool", "rm -rf /"]
    assert any("'rm -rf /' is not a plain program name" in n for n in state.notes)

    text = state.as_prompt()
    for needle in ("/app/data/sales.csv", "columns region, amount, note", "orders(id INTEGER, customer TEXT, total REAL) 3 rows",
                   "no-such-tool: MISSING", "--- /app/README.md", "line 19"):
        assert needle in text, needle
    assert "line 20" not in text
    assert len(state.as_prompt(max_chars=600)) <= 600


@docker
def test_diff_after_a_solution_and_since_reads_changed_heads_first(engine):
    with engine.session(base_image_name(), Limits()) as s:
        # More small text files than heads are read, so a deep new file is only seen via `since`.
        s.write_files({f"/app/notes/n{i:03}.txt": b"note\n" for i in range(MAX_HEADS + 20)}
                      | {"/app/keep.txt": b"same\n", "/app/edit.csv": b"a,b\n1,2\n", "/app/gone.txt": b"bye\n"})
        before = read_state(s)
        res = s.exec("mkdir -p out/deep/er && printf 'total=3\\n' > out/deep/er/result.txt && "
                     "echo 3,4 >> edit.csv && rm gone.txt && touch -d @0 keep.txt -c && chmod 600 keep.txt", 20)
        assert res.ok, res
        plain = read_state(s)
        after = read_state(s, since=before)
    assert "/app/out/deep/er/result.txt" not in plain.heads          # the heads cap, shallowest first
    assert after.heads["/app/out/deep/er/result.txt"] == "total=3\n"
    d = diff_states(before, after)
    assert d.created == ["/app/out", "/app/out/deep", "/app/out/deep/er", "/app/out/deep/er/result.txt"]
    assert d.modified == ["/app/edit.csv", "/app/keep.txt"] and d.deleted == ["/app/gone.txt"]
    assert d.changed_paths == sorted(d.created + d.modified + d.deleted)
    assert d.heads == {"/app/edit.csv": "a,b\n1,2\n3,4\n", "/app/out/deep/er/result.txt": "total=3\n"} | (
        {"/app/keep.txt": "same\n"})
    assert d.schemas["/app/edit.csv"].rows == 2
    text = d.as_prompt()
    assert "created: /app/out/deep/er/result.txt" in text and "deleted: /app/gone.txt" in text and "total=3" in text


@docker
def test_schemas_are_read_on_the_host_when_the_image_has_no_python3(engine, tmp_path):
    built = engine.build({"Dockerfile": f"FROM {base_image_name()}\nRUN rm -f /usr/bin/python3*\n".encode()},
                         "test-state-no-python3-v1")
    assert built.ok, built.log
    with engine.session(built.image, Limits()) as s:
        s.write_files({k: v for k, v in _fixture_files(tmp_path).items() if k != "/app/cache.bin"})
        state = read_state(s, tools=("python3", "jq"))
    assert any("no python3" in n for n in state.notes)
    assert state.tools["python3"] is None and state.tools["jq"]
    assert state.schemas["/app/data/sales.csv"].rows == 2
    assert state.schemas["/app/shop.db"].tables["orders"]["rows"] == 3
    assert state.schemas["/app/config.json"].keys["retries"] == "integer"


def _state(*entries: TreeEntry, heads=None) -> ContainerState:
    return ContainerState(("/app",), list(entries), heads=heads or {})


def test_diff_ignores_a_folder_whose_mtime_alone_changed():
    before = _state(TreeEntry("/app/d", "dir", 4096, 0o755, 1.0), TreeEntry("/app/d/a", "file", 1, 0o644, 1.0))
    after = _state(TreeEntry("/app/d", "dir", 4096, 0o755, 9.0), TreeEntry("/app/d/a", "file", 1, 0o644, 1.0),
                   TreeEntry("/app/d/b", "file", 2, 0o644, 9.0), heads={"/app/d/a": "x", "/app/d/b": "yy"})
    d = diff_states(before, after)
    assert (d.created, d.modified, d.deleted, d.heads) == (["/app/d/b"], [], [], {"/app/d/b": "yy"})
    assert diff_states(after, after).as_prompt().splitlines()[1] == "nothing"


@docker
def test_big_data_files_give_their_header_without_a_long_count(engine):
    with _session_after(engine, "(echo id,v; yes 1,2 | head -c 70M) > /app/big.csv && "
                                "(printf '['; yes '1,' | head -c 17M; printf '1]') > /app/big.json") as s:
        t0 = time.monotonic()
        state = read_state(s)
        assert time.monotonic() - t0 < 20
    assert (state.schemas["/app/big.csv"].columns, state.schemas["/app/big.csv"].rows) == (["id", "v"], None)
    assert state.schemas["/app/big.json"].error == "ValueError: over 16 MiB, not parsed"
    assert "/app/big.csv (csv, rows not counted (a big file)): columns id, v" in state.as_prompt()


@docker
def test_a_git_repository_is_listed_without_its_object_store_and_tools_are_looked_up_once(engine):
    with _session_after(engine, "git init -q repo && cd repo && git -c user.email=a@b -c user.name=A commit -q "
                                "--allow-empty -m one && mkdir -p node_modules/x && touch node_modules/x/i.js && "
                                "printf '#!/bin/sh\\n' > .git/hooks/pre-commit") as s:
        first = read_state(s, tools=("git", "jq"))
        execs = len(s.history)
        again = read_state(s, tools=("jq", "git"))
        assert len(s.history) - execs == 2              # tree and heads: the tools are known for this image
    paths = set(first.files)
    assert {"/app/repo/.git/objects", "/app/repo/node_modules"} <= paths
    assert not any(p.startswith(("/app/repo/.git/objects/", "/app/repo/node_modules/")) for p in paths)
    assert "/app/repo/.git/hooks/pre-commit.sample" in paths                    # listed...
    assert "/app/repo/.git/hooks/pre-commit.sample" not in first.heads          # ...but no head
    assert first.heads["/app/repo/.git/HEAD"].startswith("ref: refs/heads/")
    assert first.heads["/app/repo/.git/hooks/pre-commit"] == "#!/bin/sh\n"
    assert again.tools == {"jq": first.tools["jq"], "git": first.tools["git"]} and first.tools["git"].startswith("git version")
