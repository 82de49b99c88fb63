"""What a data file's schema is (SCHEMA_SCRIPT, run here on local files the way the host
fallback runs it; inside a container it is the same text)."""
import sqlite3

import pytest

from pipeline.synth.llm.data_schemas import FileSchema, describe_local


def test_csv_tsv_json_jsonl_and_sqlite(tmp_path):
    (tmp_path / "a.csv").write_text('k,v\n1,"x\ny"\n2,z\n')
    (tmp_path / "a.tsv").write_text("k\tv\n1\t2\n")
    (tmp_path / "a.json").write_text('[{"id": 1, "ok": true, "n": 1.5}, {"id": 2}]')
    (tmp_path / "a.jsonl").write_text('{"t": "x"}\n\n{"t": "y"}\n')
    con = sqlite3.connect(tmp_path / "a.bin")
    con.execute("create table t (a integer, b text)")
    con.execute("insert into t values (1, 'x')")
    con.commit()
    con.close()
    assert describe_local(str(tmp_path / "a.csv")) | {"path": ""} == {"path": "", "format": "csv", "columns": ["k", "v"],
                                                                       "rows": 2}
    assert describe_local(str(tmp_path / "a.tsv"))["columns"] == ["k", "v"]
    j = describe_local(str(tmp_path / "a.json"))
    assert (j["json_type"], j["rows"], j["keys"]) == ("array", 2, {"id": "integer", "ok": "boolean", "n": "number"})
    assert describe_local(str(tmp_path / "a.jsonl"))["rows"] == 2
    assert describe_local(str(tmp_path / "a.bin"))["tables"] == {"t": {"columns": ["a INTEGER", "b TEXT"], "rows": 1}}


def test_a_broken_file_raises_and_reads_as_unreadable(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError):
        describe_local(str(tmp_path / "bad.json"))
    line = FileSchema("/app/bad.json", "json", error="JSONDecodeError: Expecting property name").as_line()
    assert line == "/app/bad.json (json): unreadable: JSONDecodeError: Expecting property name"
