"""What counts as a trace the tests left: files created, changed or removed outside scratch."""
import os

from pipeline.verify.trace_scan import scan, traces


def test_traces_are_files_written_outside_scratch(tmp_path):
    root = tmp_path
    (root / "app").mkdir()
    (root / "app" / "out.txt").write_text("abc")
    (root / "app" / "gone.txt").write_text("x")
    (root / "tmp").mkdir()
    skip = {"prefixes": [str(root / "tmp") + "/"], "parts": ["__pycache__"]}
    before = scan(str(root), skip)
    (root / "app" / "new.log").write_text("1")
    (root / "app" / "gone.txt").unlink()
    st = (root / "app" / "out.txt").stat()
    os.utime(root / "app" / "out.txt", ns=(st.st_atime_ns, st.st_mtime_ns + 1000))   # same bytes, rewritten
    (root / "app" / "newdir").mkdir()              # an empty folder alone is no trace
    (root / "tmp" / "scratch.txt").write_text("s")
    (root / "app" / "__pycache__").mkdir()
    (root / "app" / "__pycache__" / "m.pyc").write_bytes(b"c")
    assert traces(before, scan(str(root), skip)) == [str(root / "app" / n) for n in ("gone.txt", "new.log", "out.txt")]
    assert traces(before, before) == []
