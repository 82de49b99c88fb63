"""What counts as a trace the tests left: files created, changed or removed outside scratch."""
from pipeline.verify.verifier_phase import Snapshot, traces


def test_traces_are_files_the_tests_wrote_outside_scratch():
    before = Snapshot({"/app/out.txt", "/app"}, {"/app/out.txt": [3, 100], "/app": None})
    after = Snapshot({"/app/out.txt", "/app", "/app/new.log", "/app/newdir", "/app/gone.txt"},
                     {"/app/out.txt": [3, 200], "/app": None, "/app/new.log": [1, 5], "/app/newdir": None,
                      "/app/gone.txt": "gone"})
    assert traces(before, after) == ["/app/gone.txt", "/app/new.log", "/app/out.txt"]
    assert traces(before, before) == []
