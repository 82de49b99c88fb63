"""The state vocabulary: each kind defined once, sentences that describe machine state."""
from __future__ import annotations

import re
from collections import Counter

import pytest

from pipeline.artifacts import vocabulary as voc
from pipeline.binaries import KNOWN_BINS

GOAL_WORDS = re.compile(r"\b(ready to|finished|achieved|you|your|should|will|must|goal)\b", re.I)


def test_each_kind_and_each_signal_is_defined_once():
    assert len({k.name for k in voc.KINDS}) == len(voc.KINDS)
    for signals in (lambda k: k.extensions, lambda k: k.filenames, lambda k: k.words):
        counts = Counter(s for k in voc.KINDS for s in signals(k))
        assert [s for s, n in counts.items() if n > 1] == []


def test_the_kinds_the_issue_names_are_there():
    wanted = {"csv-table", "json-document", "jsonl-records", "yaml-config", "xml-document", "markdown-doc",
              "pdf-document", "html-page", "text-file", "log-file", "source-tree", "shell-script", "build-project",
              "test-suite", "compiled-binary", "tar-archive", "zip-archive", "compressed-file", "sqlite-database",
              "duckdb-database", "parquet-dataset", "sql-dump", "postgres-database", "git-repository", "git-history",
              "patch-file", "http-service", "http-response", "tls-certificate", "ssh-key", "gpg-key",
              "encrypted-file", "checksum-manifest", "file-permissions", "user-accounts", "systemd-unit",
              "cron-schedule", "running-process", "container-image", "python-environment", "dependency-manifest",
              "image-file", "audio-file", "video-file", "plot-image", "report", "directory-tree"}
    assert wanted <= set(voc.BY_NAME)


@pytest.mark.parametrize("k", voc.KINDS, ids=lambda k: k.name)
def test_sentences_are_machine_state_not_goals(k):
    q = "Python" if k.name in voc.QUALIFIED else None
    present, produced = k.present(q), k.produced(q)
    for sentence in (present, produced):
        assert sentence[0].isupper() and sentence.endswith(".") and "{" not in sentence and "  " not in sentence
        assert not GOAL_WORDS.search(sentence), sentence
    assert present != produced


def test_present_sentences_tell_kinds_apart():
    sentences = [k.present("Python" if k.name in voc.QUALIFIED else None) for k in voc.KINDS]
    assert len(set(sentences)) == len(sentences)


@pytest.mark.parametrize("name, kind", [
    ("data.csv", "csv-table"), ("latency.tsv", "tsv-table"), ("events.jsonl", "jsonl-records"), ("release.tar.gz", "tar-archive"),
    ("backup.tar.zst", "tar-archive"), ("notes.txt.gz", "compressed-file"), ("db/app.sqlite", "sqlite-database"),
    ("Makefile", "build-project"), ("src/Cargo.toml", "build-project"), ("requirements.txt", "dependency-manifest"),
    ("Dockerfile", "container-image"), ("site.key", "tls-certificate"), ("clip.MP4", "video-file"),
    ("schema.sql", "sql-dump"), ("fix.patch", "patch-file"), ("notes", None), ("archive.unknownext", None)])
def test_kind_of_file(name, kind):
    assert voc.kind_of_file(name) == kind


def test_commands_that_need_or_leave_a_kind():
    assert "postgres-database" in voc.READS["psql"] and "sql-dump" in voc.WRITES["pg_dump"]
    assert "git-history" in voc.READS["git bisect"] and "git-repository" in voc.WRITES["git clone"]
    assert voc.COMMANDS >= {"psql", "pg_dump", "git", "ffmpeg", "jq", "sqlite3", "ssh-keygen", "crontab"}
    # every command word the vocabulary names is a real binary we know or an explicit tool of its kind
    unknown = sorted(c for c in voc.COMMANDS if c not in KNOWN_BINS)
    assert len(unknown) < len(voc.COMMANDS) / 2, unknown


def test_a_set_of_kinds_always_reads_the_same():
    a = voc.present_state([("json-document", None), ("source-tree", "Go")])
    b = voc.present_state([("source-tree", "Go"), ("json-document", None), ("json-document", None)])
    assert a == b == "A JSON document and a Go source tree are in the working directory."


def test_kinds_with_their_own_place_keep_their_own_sentence():
    s = voc.present_state([("postgres-database", None), ("sql-dump", None)])
    assert s == ("An SQL dump or schema script is in the working directory. "
                 "A PostgreSQL database is running and reachable on this machine.")


def test_report_on_a_kind():
    assert voc.report_on("source-tree", "Rust") == "A written report on a Rust source tree is in the working directory."


def test_unknown_kind_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown state kind 'spreadsheet-thing'"):
        voc.kind("spreadsheet-thing")


def test_a_kind_implied_by_another_is_not_said_twice():
    assert voc.present_state([("git-repository", None), ("git-history", None)]) == voc.kind("git-history").present()
    assert voc.present_state([("source-tree", "Go"), ("test-suite", "Go")]) == voc.kind("test-suite").present("Go")
